package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"otpgate/internal/fraud"
)

// FraudConversion implements fraud.Store: grouped range scans of the sends and approvals
// since since and, before the rolled-up boundary, of their hourly rollups, in one
// statement's snapshot. A rolled-up hour counts whole, so the hour holding since counts
// whole once it is rolled up. Hours rolled up while the prefix setting dropped fewer digits
// are cut to the running setting; hours rolled up while it dropped more keep their shorter
// prefixes (the finer ones are gone with the raw rows). The raw rows keep no prefix finer
// than PrefixKeep digits short of the number: a setting below that counts by PrefixKeep.
func (s *Store) FraudConversion(ctx context.Context, since time.Time, drop int) ([]fraud.PrefixCount, error) {
	rows, _ := s.pool.Query(ctx, `WITH s AS (
			SELECT `+prefixSQL("phone_prefix", "$2::int")+` AS prefix,
				count(*) FILTER (WHERE status IN ('sent', 'sending')) AS sends,
				count(*) FILTER (WHERE status = 'blocked') AS blocked, 0 AS approvals
			FROM sends WHERE created_at >= $1::timestamptz AND created_at >= (`+rolledBeforeSQL+`) AND `+prefixLongSQL("phone_prefix", "$2::int")+`
			GROUP BY 1
		), a AS (
			SELECT `+prefixSQL("v.phone_prefix", "$2::int")+` AS prefix, 0 AS sends, 0 AS blocked, count(*) AS approvals
			FROM attempts t JOIN verifications v ON v.id = t.verification_id
			WHERE t.outcome = 'approved' AND t.created_at >= $1::timestamptz AND t.created_at >= (`+rolledBeforeSQL+`)
				AND `+prefixLongSQL("v.phone_prefix", "$2::int")+`
			GROUP BY 1
		), r AS (
			SELECT CASE WHEN prefix_drop <= $2 THEN left(prefix, length(prefix) - ($2 - prefix_drop)) ELSE prefix END AS prefix,
				sends, blocked, approvals
			FROM conversion_hourly
			WHERE hour > $1::timestamptz - interval '1 hour' AND hour < (`+rolledBeforeSQL+`)
				AND (prefix_drop > $2 OR length(prefix) - ($2 - prefix_drop) >= 3)
		)
		SELECT prefix, sum(sends)::bigint, sum(blocked)::bigint, sum(approvals)::bigint
		FROM (SELECT * FROM s UNION ALL SELECT * FROM a UNION ALL SELECT * FROM r) c
		GROUP BY prefix ORDER BY prefix`, since, drop)
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (fraud.PrefixCount, error) {
		var c fraud.PrefixCount
		err := r.Scan(&c.Prefix, &c.Sends, &c.Blocked, &c.Approvals)
		return c, err
	})
	if err != nil {
		return nil, wrap("fraud conversion", err)
	}
	return out, nil
}
