package admin

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"otpgate/internal/history"
)

func hourly(bs ...history.StatBucket) []history.StatBucket {
	start := time.Date(2030, 1, 2, 0, 0, 0, 0, time.UTC)
	for i := range bs {
		bs[i].Start = start.Add(time.Duration(i) * time.Hour)
		if bs[i].Sends > 0 {
			bs[i].ApprovalRatio = float64(bs[i].Approvals) / float64(bs[i].Sends)
		}
	}
	return bs
}

func TestNewChart(t *testing.T) {
	t.Run("EmptyRangeDrawsNoBars", func(t *testing.T) {
		c := newChart("empty", hourly(history.StatBucket{}, history.StatBucket{}), time.Hour)
		if !c.Empty || len(c.Bars) != 0 || c.RatioPath != "" || len(c.Rows) != 2 {
			t.Errorf("got empty=%v, %d bars, path %q, %d rows; want empty, none, none, 2", c.Empty, len(c.Bars), c.RatioPath, len(c.Rows))
		}
	})

	t.Run("BarHeightsAreProportional", func(t *testing.T) {
		c := newChart("one", hourly(history.StatBucket{
			Sends: 10, Failed: 2, Blocked: map[string]int{"phone 1/1m": 5, "ip 10/1h": 1}, Duplicates: 2, Approvals: 5,
		}), time.Hour)
		plotH := c.PlotY1 - c.PlotY0
		// 18 requests on an axis up to 20.
		if got := c.YTicks[len(c.YTicks)-1].Label; got != "20" {
			t.Fatalf("axis top: got %s, want 20", got)
		}
		heights := map[string]float64{}
		var stacked float64
		for _, b := range c.Bars {
			heights[b.Kind+" "+b.Label[strings.Index(b.Label, ": ")+2:]] += b.H
			if b.Kind != "approved" {
				stacked += b.H
			}
			if b.Y+b.H > c.PlotY1+0.1 || b.Y < c.PlotY0-0.1 {
				t.Errorf("bar %q leaves the plot: y %v h %v", b.Label, b.Y, b.H)
			}
		}
		for label, want := range map[string]float64{
			"sent 8 sent": 8, "failed 2 failed": 2, "blocked 5 blocked by phone 1/1m": 5, "blocked 1 blocked by ip 10/1h": 1,
			"duplicate 2 duplicate": 2, "approved 5 approved": 5,
		} {
			if got, want := heights[label], want/20*plotH; math.Abs(got-want) > 0.2 {
				t.Errorf("%s: got height %v, want %v", label, got, want)
			}
		}
		if math.Abs(stacked-18.0/20*plotH) > 0.5 {
			t.Errorf("stacked traffic: got %v, want %v", stacked, 18.0/20*plotH)
		}
		if len(c.RatioPoints) != 1 || math.Abs(c.RatioPoints[0].Y-(c.PlotY1-0.5*plotH)) > 0.1 {
			t.Errorf("ratio point: got %+v, want one at 50%%", c.RatioPoints)
		}
	})

	t.Run("RatioLineHasGapsWithoutSends", func(t *testing.T) {
		c := newChart("gaps", hourly(
			history.StatBucket{Sends: 4, Approvals: 2}, history.StatBucket{Sends: 2, Approvals: 2},
			history.StatBucket{}, history.StatBucket{Sends: 1, Approvals: 0},
		), time.Hour)
		var cmds []string
		for _, f := range strings.Fields(c.RatioPath) {
			if f[0] == 'M' || f[0] == 'L' {
				cmds = append(cmds, f[:1])
			}
		}
		if want := []string{"M", "L", "M"}; !slices.Equal(cmds, want) {
			t.Errorf("path %q: got commands %v, want %v", c.RatioPath, cmds, want)
		}
		if got := []string{c.Rows[0].Ratio, c.Rows[2].Ratio, c.Rows[3].Ratio}; !slices.Equal(got, []string{"50%", "–", "0%"}) {
			t.Errorf("table ratios: got %v", got)
		}
	})

	t.Run("FrequentReasonsComeFirst", func(t *testing.T) {
		got := blockReasons(hourly(
			history.StatBucket{Blocked: map[string]int{"ip 10/1h": 1, "phone 1/1m": 2}},
			history.StatBucket{Blocked: map[string]int{"phone 1/1m": 3, "global 1000/1h": 1, "none": 0}},
		))
		if want := []string{"phone 1/1m", "global 1000/1h", "ip 10/1h"}; !slices.Equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	})

	t.Run("DailyLabelsNameTheDay", func(t *testing.T) {
		c := newChart("week", []history.StatBucket{{Start: time.Date(2030, 1, 2, 0, 0, 0, 0, time.UTC)}}, 24*time.Hour)
		if c.XTicks[0].Label != "Wed Jan 2" {
			t.Errorf("got %q, want %q", c.XTicks[0].Label, "Wed Jan 2")
		}
	})
}

func TestNiceCeil(t *testing.T) {
	for _, tc := range []struct{ in, want int }{
		{0, 2}, {1, 2}, {2, 2}, {3, 4}, {5, 8}, {9, 10}, {11, 20}, {18, 20}, {21, 40}, {41, 50}, {51, 80}, {999, 1000}, {1001, 2000},
	} {
		if got := niceCeil(tc.in); got != tc.want {
			t.Errorf("niceCeil(%d): got %d, want %d", tc.in, got, tc.want)
		}
	}
}
