package report

import (
	"math"
	"strconv"
	"strings"
)

// Colors of the results, in input order: distinct hues that stay apart
// for the common kinds of color blindness and print legibly in grey.
var palette = []string{"#1f77b4", "#d95f02", "#1b9e77", "#7570b3", "#e7298a", "#66a61e", "#a6761d", "#444444"}

// Dash patterns of the kinds of line in one plot ("none" is solid: an
// empty stroke-dasharray would be an invalid attribute value).
var dashes = []string{"none", "7 4", "2 3", "9 3 2 3", "4 2"}

// neutral is the color of legend entries that stand for a kind of line
// rather than a result.
const neutral = "#555555"

// lineStyle is how one line is drawn; the legend shows the same.
type lineStyle struct {
	Color string
	Dash  string
}

// styleOf chooses the style of the line of kind k for result i: with one
// result the kinds get colors (easiest to tell apart); with several, the
// color is the result's, as in every other plot and table, and the kind is
// the dash pattern.
func styleOf(i, k, nResults int) lineStyle {
	if nResults == 1 {
		return lineStyle{palette[k%len(palette)], "none"}
	}
	return lineStyle{palette[i%len(palette)], dashes[k%len(dashes)]}
}

func resultStyle(i int) lineStyle { return lineStyle{palette[i%len(palette)], "none"} }

// legendEntry is one key below a plot.
type legendEntry struct {
	lineStyle
	Label string
}

// tick is one labelled grid line, at Pos in SVG coordinates.
type tick struct {
	Pos   float64
	Label string
}

// line is one drawn line: one polyline per unbroken run of points.
type line struct {
	lineStyle
	Name     string
	Segments []string // values of the points attribute
}

// plot is a finished SVG plot, ready for the template: everything in it
// is a number this package computed or a string the template escapes.
type plot struct {
	ID, Title, Note string
	// Empty, when set, replaces the drawing: the plot had no data, and the
	// page says why instead of showing empty axes.
	Empty          string
	W, H           int
	Left, Top      float64
	Right, Bottom  float64
	XTicks, YTicks []tick
	XLabel, YLabel string
	// Positions the template cannot compute: the plot area's size, the
	// middle of each axis and where the tick labels and axis labels sit.
	PW, PH, XMid, YMid, XTickY, YTickX, XLabelY float64
	Lines                                       []line
	Legend                                      []legendEntry
}

// Geometry of every plot, in SVG user units (the page scales them).
const (
	plotW      = 720
	plotH      = 300
	marginL    = 70
	marginR    = 36 // room for half the last tick label (99.999%)
	marginT    = 14
	marginB    = 46
	maxPerLine = 3000 // points kept per polyline; more are thinned per pixel column
)

// xy is one data point in data units.
type xy struct{ X, Y float64 }

// dataLine is one line of a chart in data units, before scaling; each
// segment is drawn unbroken, and gaps between segments are intervals with
// nothing to show (no replies, hence no latency).
type dataLine struct {
	lineStyle
	Name string
	Segs [][]xy
}

// axisSpec says how a chart draws one axis.
type axisSpec struct {
	Label string
	Unit  unit // ignored when Ticks is set
	// Fixed axes (the percentile spectrum) give their range and ticks;
	// other axes run from 0 to a nice number above the largest value.
	Max   float64
	Ticks []fixedTick
	// UnitOf picks the unit from the largest value on the axis.
	UnitOf func(maxV float64) unit
	// Exact ends the axis at the largest value rather than at the nice
	// number above it: a time axis ends where the run did.
	Exact bool
}

// fixedTick is a tick of a fixed axis, in data units.
type fixedTick struct {
	V     float64
	Label string
}

// chart is a plot in data units; render scales it into a plot.
type chart struct {
	ID, Title, Note string
	Empty           string // the message shown when no line has a point
	X, Y            axisSpec
	Lines           []dataLine
	Legend          []legendEntry
}

// render scales the chart's lines into the plot area and lays out the
// ticks. A chart without a single point renders as its Empty message.
func (c *chart) render() plot {
	p := plot{ID: c.ID, Title: c.Title, Note: c.Note, W: plotW, H: plotH,
		Left: marginL, Top: marginT, Right: plotW - marginR, Bottom: plotH - marginB,
		Legend: c.Legend}
	var maxX, maxY float64
	points := 0
	for _, l := range c.Lines {
		for _, s := range l.Segs {
			for _, pt := range s {
				maxX = math.Max(maxX, pt.X)
				maxY = math.Max(maxY, pt.Y)
				points++
			}
		}
	}
	if points == 0 {
		p.Empty = c.Empty
		if p.Empty == "" {
			p.Empty = "no data"
		}
		return p
	}
	p.PW, p.PH = p.Right-p.Left, p.Bottom-p.Top
	p.XMid, p.YMid = (p.Left+p.Right)/2, (p.Top+p.Bottom)/2
	p.XTickY, p.YTickX, p.XLabelY = p.Bottom+17, p.Left-7, plotH-8
	xs := layoutAxis(c.X, maxX)
	ys := layoutAxis(c.Y, maxY)
	p.XLabel, p.YLabel = xs.label, ys.label
	sx := func(v float64) float64 { return p.Left + (p.Right-p.Left)*clamp01(v/xs.top) }
	sy := func(v float64) float64 { return p.Bottom - (p.Bottom-p.Top)*clamp01(v/ys.top) }
	for _, t := range xs.ticks {
		p.XTicks = append(p.XTicks, tick{round1(sx(t.V)), t.Label})
	}
	for _, t := range ys.ticks {
		p.YTicks = append(p.YTicks, tick{round1(sy(t.V)), t.Label})
	}
	for _, l := range c.Lines {
		out := line{lineStyle: l.lineStyle, Name: l.Name}
		for _, s := range l.Segs {
			if len(s) == 0 {
				continue
			}
			scaled := make([]xy, len(s))
			for i, pt := range s {
				scaled[i] = xy{sx(pt.X), sy(pt.Y)}
			}
			out.Segments = append(out.Segments, pointsAttr(thin(scaled)))
		}
		if len(out.Segments) > 0 {
			p.Lines = append(p.Lines, out)
		}
	}
	return p
}

// laidAxis is an axis with its range fixed: top is the data value at the
// end of the axis.
type laidAxis struct {
	top   float64
	ticks []fixedTick
	label string
}

func layoutAxis(a axisSpec, maxV float64) laidAxis {
	if len(a.Ticks) > 0 {
		return laidAxis{top: a.Max, ticks: a.Ticks, label: a.Label}
	}
	u := a.Unit
	if a.UnitOf != nil {
		u = a.UnitOf(maxV)
	}
	if u.Div == 0 {
		u.Div = 1
	}
	vals, step := niceTicks(maxV, u.Div, 5)
	la := laidAxis{top: vals[len(vals)-1], label: a.Label}
	if a.Exact && maxV > 0 && !math.IsInf(maxV, 0) {
		la.top = maxV
	}
	for _, v := range vals {
		if v <= la.top*(1+1e-9) {
			la.ticks = append(la.ticks, fixedTick{v, u.label(v, step)})
		}
	}
	if u.Suffix != "" && !u.multiplier() {
		la.label += " (" + u.Suffix + ")"
	}
	return la
}

// thin keeps long lines drawable: past maxPerLine points it keeps, per
// half pixel column, the first, lowest, highest and last point in their
// order, so spikes survive and the shape is unchanged at screen scale.
func thin(pts []xy) []xy {
	if len(pts) <= maxPerLine {
		return pts
	}
	out := make([]xy, 0, maxPerLine)
	for i := 0; i < len(pts); {
		col := math.Floor(pts[i].X * 2)
		j := i
		lo, hi := i, i
		for j < len(pts) && math.Floor(pts[j].X*2) == col {
			if pts[j].Y < pts[lo].Y {
				lo = j
			}
			if pts[j].Y > pts[hi].Y {
				hi = j
			}
			j++
		}
		keep := []int{i, lo, hi, j - 1}
		last := -1
		for _, k := range sortedUnique(keep) {
			if k != last {
				out = append(out, pts[k])
				last = k
			}
		}
		i = j
	}
	return out
}

func sortedUnique(k []int) []int {
	for i := 1; i < len(k); i++ {
		for j := i; j > 0 && k[j] < k[j-1]; j-- {
			k[j], k[j-1] = k[j-1], k[j]
		}
	}
	return k
}

func pointsAttr(pts []xy) string {
	var b strings.Builder
	for i, pt := range pts {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatFloat(round1(pt.X), 'f', -1, 64))
		b.WriteByte(',')
		b.WriteString(strconv.FormatFloat(round1(pt.Y), 'f', -1, 64))
	}
	return b.String()
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }

func clamp01(v float64) float64 {
	switch {
	case math.IsNaN(v) || v < 0:
		return 0
	case v > 1:
		return 1
	}
	return v
}
