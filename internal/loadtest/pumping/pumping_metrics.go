package pumping

import (
	"context"
	"errors"
	"fmt"
	"io"
	mathrand "math/rand/v2"
	"net/http"
	"strings"
)

// readMetrics reads the blocks the guard started and the shadow findings from /metrics.
func (s *sim) readMetrics(ctx context.Context, r *pumpResult) error {
	if len(s.e.Systems[0].Procs) == 0 {
		return errors.New("no admin listener to read the metrics from")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.e.Systems[0].Procs[0].Admin+"/metrics", nil)
	if err != nil {
		return err
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	scopes := map[string]int{}
	for _, line := range strings.Split(string(body), "\n") {
		name, labels, value, ok := metricLine(line)
		if !ok {
			continue
		}
		switch name {
		case "otpgate_fraud_blocks_started_total":
			if strings.Contains(labels, `mode="shadow"`) {
				r.shadowBlocks += value
			} else {
				r.blocks += value
			}
			if value > 0 {
				scopes[labelValue(labels, "scope")] += value
			}
		case "otpgate_fraud_shadow_total":
			r.shadowFlagged += value
		}
	}
	var parts []string
	for _, sc := range []string{"country", "prefix", "ip_net", "young_countries"} {
		if n := scopes[sc]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s×%d", sc, n))
		}
	}
	r.blockedScopes = strings.Join(parts, " ")
	return nil
}

// metricLine splits a Prometheus text line such as `name{a="b"} 3`.
func metricLine(line string) (name, labels string, value int, ok bool) {
	if line == "" || line[0] == '#' {
		return "", "", 0, false
	}
	head, num, found := strings.Cut(line, " ")
	if !found {
		return "", "", 0, false
	}
	name, labels, _ = strings.Cut(head, "{")
	var f float64
	if _, err := fmt.Sscanf(num, "%g", &f); err != nil {
		return "", "", 0, false
	}
	return name, labels, int(f), true
}

// labelValue returns one label's value from `a="b",c="d"}`.
func labelValue(labels, name string) string {
	_, rest, ok := strings.Cut(labels, name+`="`)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, `"`)
	return v
}

// pick draws a country by weight.
func pick(cs []country) country {
	x := mathrand.Float64()
	for _, c := range cs {
		if x -= c.weight; x < 0 {
			return c
		}
	}
	return cs[len(cs)-1]
}
