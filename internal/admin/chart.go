package admin

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"otpgate/internal/history"
)

// chart is a bar chart of stat buckets drawn as inline SVG by the charts template:
// per bucket one stacked bar of traffic (sends, failures, blocks by reason,
// duplicates) and one bar of approvals, with the approval ratio as a line on its own
// 0–100 % axis. Everything is computed here, so the template only places shapes.
type chart struct {
	Title          string
	Width, Height  float64
	PlotX0, PlotX1 float64
	PlotY0, PlotY1 float64
	Bars           []chartBar
	// RatioPath is an SVG path through the buckets that had sends; gaps where none had.
	RatioPath   string
	RatioPoints []chartPoint
	YTicks      []chartTick
	RatioTicks  []chartTick
	XTicks      []chartTick
	Legend      []chartKey
	Rows        []chartRow
	Empty       bool
}

// chartBar is one rectangle, with the tooltip a browser shows without script.
type chartBar struct {
	X, Y, W, H float64
	Fill, Kind string
	Label      string
}

type chartPoint struct {
	X, Y  float64
	Label string
}

type chartTick struct {
	At    float64
	Label string
}

type chartKey struct {
	Fill, Label string
}

// chartRow is one bucket in the table under the chart.
type chartRow struct {
	Start                                         string
	Sends, Failed, Blocked, Duplicates, Approvals int
	Ratio                                         string
}

// Colours of the chart; blocks get warm colours, one per refusing rule, in turn.
const (
	colorSent      = "#3566a8"
	colorFailed    = "#8e5ab5"
	colorDuplicate = "#9aa0a6"
	colorApproved  = "#2e9d57"
	colorRatio     = "#1b1f24"
)

func blockColors() []string {
	return []string{"#d64541", "#f39c12", "#a93226", "#e67e22", "#c2185b", "#f5b041"}
}

// newChart lays out buckets of width bucket.
func newChart(title string, buckets []history.StatBucket, bucket time.Duration) chart {
	c := chart{Title: title, Width: 720, Height: 240, PlotX0: 44, PlotX1: 672, PlotY0: 10, PlotY1: 212}
	reasons := blockReasons(buckets)
	colors := blockColors()
	reasonColor := map[string]string{}
	c.Legend = []chartKey{{colorSent, "sent"}, {colorFailed, "failed"}}
	for i, r := range reasons {
		reasonColor[r] = colors[i%len(colors)]
		c.Legend = append(c.Legend, chartKey{reasonColor[r], "blocked: " + r})
	}
	c.Legend = append(c.Legend, chartKey{colorDuplicate, "duplicate"}, chartKey{colorApproved, "approved"}, chartKey{colorRatio, "approval ratio"})

	peak := 0
	for _, b := range buckets {
		peak = max(peak, traffic(b), b.Approvals)
	}
	c.Empty = peak == 0
	yMax := niceCeil(peak)
	plotW, plotH := c.PlotX1-c.PlotX0, c.PlotY1-c.PlotY0
	scale := func(v int) float64 { return float64(v) / float64(yMax) * plotH }
	for _, v := range []int{0, yMax / 2, yMax} {
		c.YTicks = append(c.YTicks, chartTick{At: round1(c.PlotY1 - scale(v)), Label: strconv.Itoa(v)})
	}
	for _, pct := range []int{0, 50, 100} {
		c.RatioTicks = append(c.RatioTicks, chartTick{At: round1(c.PlotY1 - float64(pct)/100*plotH), Label: strconv.Itoa(pct) + "%"})
	}

	n := max(len(buckets), 1)
	slot := plotW / float64(n)
	step := (n + 7) / 8
	var path strings.Builder
	pen := "M"
	for i, b := range buckets {
		left := c.PlotX0 + float64(i)*slot
		when := bucketLabel(b.Start, bucket)
		if i%step == 0 {
			c.XTicks = append(c.XTicks, chartTick{At: round1(left + slot/2), Label: when})
		}
		// The traffic bar, stacked from the bottom.
		y := c.PlotY1
		stack := func(v int, fill, kind, what string) {
			if v <= 0 {
				return
			}
			h := scale(v)
			y -= h
			c.Bars = append(c.Bars, chartBar{X: round1(left + slot*0.1), Y: round1(y), W: round1(slot * 0.42), H: round1(h),
				Fill: fill, Kind: kind, Label: fmt.Sprintf("%s: %d %s", when, v, what)})
		}
		stack(b.Sends-b.Failed, colorSent, "sent", "sent")
		stack(b.Failed, colorFailed, "failed", "failed")
		for _, r := range reasons {
			stack(b.Blocked[r], reasonColor[r], "blocked", "blocked by "+r)
		}
		stack(b.Duplicates, colorDuplicate, "duplicate", "duplicate")
		if b.Approvals > 0 {
			h := scale(b.Approvals)
			c.Bars = append(c.Bars, chartBar{X: round1(left + slot*0.54), Y: round1(c.PlotY1 - h), W: round1(slot * 0.36), H: round1(h),
				Fill: colorApproved, Kind: "approved", Label: fmt.Sprintf("%s: %d approved", when, b.Approvals)})
		}
		ratio := "–"
		if b.Sends > 0 {
			ratio = fmt.Sprintf("%.0f%%", b.ApprovalRatio*100)
			x, y := round1(left+slot/2), round1(c.PlotY1-math.Min(b.ApprovalRatio, 1)*plotH)
			fmt.Fprintf(&path, "%s%.1f %.1f ", pen, x, y)
			pen = "L"
			c.RatioPoints = append(c.RatioPoints, chartPoint{X: x, Y: y, Label: fmt.Sprintf("%s: approval ratio %s", when, ratio)})
		} else {
			pen = "M"
		}
		c.Rows = append(c.Rows, chartRow{Start: when, Sends: b.Sends, Failed: b.Failed, Blocked: blockedTotal(b),
			Duplicates: b.Duplicates, Approvals: b.Approvals, Ratio: ratio})
	}
	c.RatioPath = strings.TrimSpace(path.String())
	return c
}

// traffic is everything asked for in a bucket: sends, blocks and duplicates.
func traffic(b history.StatBucket) int { return b.Sends + blockedTotal(b) + b.Duplicates }

func blockedTotal(b history.StatBucket) int {
	n := 0
	for _, v := range b.Blocked {
		n += v
	}
	return n
}

// blockReasons lists the refusing rules, the most frequent first, so colours are stable
// for a given range.
func blockReasons(buckets []history.StatBucket) []string {
	totals := map[string]int{}
	for _, b := range buckets {
		for r, v := range b.Blocked {
			if v > 0 {
				totals[r] += v
			}
		}
	}
	reasons := make([]string, 0, len(totals))
	for r := range totals {
		reasons = append(reasons, r)
	}
	slices.SortFunc(reasons, func(a, b string) int {
		return cmp.Or(cmp.Compare(totals[b], totals[a]), cmp.Compare(a, b))
	})
	return reasons
}

// niceCeil rounds a count up to an even 1, 2, 4, 5 or 8 times a power of ten, for a
// readable axis whose half-way tick is a whole number.
func niceCeil(v int) int {
	if v <= 1 {
		return 2
	}
	for p := 1; ; p *= 10 {
		for _, m := range []int{1, 2, 4, 5, 8} {
			if m*p >= v && (m*p)%2 == 0 {
				return m * p
			}
		}
	}
}

// bucketLabel names a bucket by its start, in UTC: the day for daily buckets.
func bucketLabel(t time.Time, bucket time.Duration) string {
	if bucket >= 24*time.Hour {
		return t.UTC().Format("Mon Jan 2")
	}
	return t.UTC().Format("15:04")
}

func round1(f float64) float64 { return math.Round(f*10) / 10 }
