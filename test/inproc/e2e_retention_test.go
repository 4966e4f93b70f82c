package inproc

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"otpgate/internal/server/servertest"
	"otpgate/internal/testenv"
)

// seedHistory writes n verifications from start, one every step, to Japanese and British
// numbers: each with a send that went out (or, every third, failed) and, every other one,
// an approving check two minutes later; and a refused send per verification, blocked or
// duplicate. It returns how many rows it wrote.
func seedHistory(t *testing.T, pool *pgxpool.Pool, start time.Time, step time.Duration, n int) int {
	t.Helper()
	var vs, ss, as [][]any
	for i := range n {
		at := start.Add(time.Duration(i) * step)
		id := testenv.UUIDAt(at)
		phone := fmt.Sprintf("+8190%08d", i)
		if i%4 == 3 {
			phone = fmt.Sprintf("+447911%06d", i)
		}
		status, closed, sendStatus := "expired", at.Add(5*time.Minute), "sent"
		if i%2 == 0 {
			status, closed = "approved", at.Add(2*time.Minute)
			as = append(as, []any{id, "approved", "198.51.100.7", closed})
		}
		if i%3 == 0 {
			sendStatus = "failed"
		}
		vs = append(vs, []any{id, phone, "sms", "en", status, 1, 0, 5, "192.0.2.1", at, at.Add(5 * time.Minute), closed})
		ss = append(ss, []any{testenv.UUIDAt(at), id, phone, "192.0.2.1", sendStatus, "", "webhook", at, at})
		refused, reason := "blocked", "phone 1/1m"
		if i%5 == 0 {
			refused, reason = "duplicate", "duplicate 1/5s"
		}
		ss = append(ss, []any{testenv.UUIDAt(at.Add(time.Second)), nil, phone, "192.0.2.1", refused, reason, "", at.Add(time.Second), at.Add(time.Second)})
	}
	for _, c := range []struct {
		table string
		cols  []string
		rows  [][]any
	}{
		{"verifications", []string{"id", "phone", "channel", "locale", "status", "sends", "attempts", "max_attempts", "client_ip", "created_at", "expires_at", "closed_at"}, vs},
		{"sends", []string{"id", "verification_id", "phone", "client_ip", "status", "reason", "provider", "created_at", "updated_at"}, ss},
		{"attempts", []string{"verification_id", "outcome", "client_ip", "created_at"}, as},
	} {
		if _, err := pool.CopyFrom(context.Background(), pgx.Identifier{c.table}, c.cols, pgx.CopyFromRows(c.rows)); err != nil {
			t.Fatalf("seed %s: %v", c.table, err)
		}
	}
	return len(vs) + len(ss) + len(as)
}

// wantSameCharts fails t unless after shows what before showed: the same buckets and rows,
// and, if the hour turned meanwhile, empty buckets after them.
func wantSameCharts(t *testing.T, before, after map[string][]any) {
	t.Helper()
	for path, b := range before {
		a := after[path]
		if len(a) < len(b) || !reflect.DeepEqual(a[:len(b)], b) {
			got, _ := json.Marshal(a)
			want, _ := json.Marshal(b)
			t.Errorf("GET %s changed across the purge:\n got %s\nwant %s", path, got, want)
			continue
		}
		for _, extra := range a[len(b):] {
			m, _ := extra.(map[string]any)
			if m["sends"] != 0.0 || m["approvals"] != 0.0 || m["duplicates"] != 0.0 || len(m["blocked"].(map[string]any)) != 0 {
				t.Errorf("GET %s: a bucket after the first reading holds %v, want it empty", path, m)
			}
		}
	}
}

// metricValue reads one sample of a scrape; -1 when it is missing.
func metricValue(body, series string) float64 {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		return -1
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

func TestHistoryRetention(t *testing.T) {
	p := servertest.NewProvider(t)
	keepEnv := servertest.ProdEnv(t, p, map[string]string{"OTP_HISTORY_RETENTION": "off", "OTP_LIMIT_IP": "off"})
	keeper := servertest.Start(t, keepEnv)
	pool, err := pgxpool.New(context.Background(), keepEnv["DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	now := time.Now().UTC()
	// Three days old to a day and a half old: all of it past a day's retention.
	seeded := seedHistory(t, pool, now.Add(-72*time.Hour), 13*time.Minute, 150)
	// Today's sends, through the API, one approved.
	phone := servertest.NewPhone()
	servertest.WantStatus(t, servertest.Send(t, keeper, phone), http.StatusCreated, "")
	servertest.WantStatus(t, servertest.Check(t, keeper, map[string]string{"phone": phone, "code": servertest.LastCode(t, p, phone)}), http.StatusOK, "")
	servertest.WantStatus(t, servertest.Send(t, keeper, servertest.NewPhone()), http.StatusCreated, "")

	since := now.Add(-96 * time.Hour).Truncate(time.Hour)
	before := servertest.Charts(t, keeper, since)

	purgeEnv := map[string]string{}
	for k, v := range keepEnv {
		purgeEnv[k] = v
	}
	purgeEnv["OTP_HISTORY_RETENTION"], purgeEnv["OTP_RETENTION_INTERVAL"] = "1d", "100ms"
	purger := servertest.Start(t, purgeEnv)
	deadline := time.Now().Add(30 * time.Second)
	var metrics string
	for {
		metrics = scrapeMetrics(t, purger)
		if metricValue(metrics, "otpgate_retention_last_pass_timestamp_seconds") > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no retention pass in 30s:\n%s", grep(metrics, "otpgate_retention_"))
		}
		time.Sleep(50 * time.Millisecond)
	}

	var old int
	if err := pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM verifications WHERE created_at < now() - interval '25 hours')
		+ (SELECT count(*) FROM sends WHERE created_at < now() - interval '25 hours')
		+ (SELECT count(*) FROM attempts WHERE created_at < now() - interval '25 hours')`).Scan(&old); err != nil {
		t.Fatal(err)
	}
	if old != 0 {
		t.Errorf("%d rows past retention left after the pass, want none", old)
	}
	purged := 0.0
	for _, table := range []string{"verifications", "sends", "attempts"} {
		purged += metricValue(metrics, `otpgate_retention_purged_rows_total{table="`+table+`"}`)
	}
	if int(purged) != seeded {
		t.Errorf("metrics: got %v rows purged, want the %d seeded:\n%s", purged, seeded, grep(metrics, "otpgate_retention_"))
	}
	if behind := metricValue(metrics, `otpgate_retention_behind_seconds{table="sends"}`); behind != 0 {
		t.Errorf("metrics: got sends %v seconds behind, want 0", behind)
	}
	wantSameCharts(t, before, servertest.Charts(t, purger, since))
	wantSameCharts(t, before, servertest.Charts(t, keeper, since))
	if !strings.Contains(metrics, "otpgate_retention_rolled_hours_total") {
		t.Errorf("metrics lack otpgate_retention_rolled_hours_total")
	}
}
