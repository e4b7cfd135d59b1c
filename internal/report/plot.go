package report

import (
	"math"
	"sort"
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

// markKey is a key below a plot for a kind of marked point; it follows
// the keys of the lines.
type markKey struct {
	mark
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
	Rules                                       []rule
	Marks                                       []mark
	Legend                                      []legendEntry
	MarkLegend                                  []markKey
}

// rule is a drawn reference line with its label, in SVG coordinates.
type rule struct {
	lineStyle
	X1, Y1, X2, Y2 float64
	Label          string
	LX, LY         float64
	Anchor         string // text-anchor of the label: start or end
}

// mark is a drawn data point, in SVG coordinates: a dot or a square,
// filled or in outline.
type mark struct {
	X, Y   float64 // the centre
	X0, Y0 float64 // the top left corner of a square
	Square bool
	Color  string
	Fill   string
	Title  string // what the point is, shown on hover
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
	// Log makes the axis logarithmic, from the 1-2-5 value at or below the
	// smallest positive value to the one at or above the largest, so
	// latency that runs from a millisecond below the knee to seconds past
	// it stays readable at both ends. Each tick carries its own unit
	// (500µs, 1ms, 2s), as one unit cannot suit every decade.
	Log bool
}

// fixedTick is a tick of a fixed axis, in data units.
type fixedTick struct {
	V     float64
	Label string
}

// chart is a plot in data units; render scales it into a plot.
type chart struct {
	ID, Title, Note string
	Empty           string // the message shown when no line or mark has a point
	X, Y            axisSpec
	Lines           []dataLine
	Marks           []dataMark
	Refs            []refLine
	Legend          []legendEntry
	MarkLegend      []markKey
}

// dataMark is one marked point in data units: a step of a capacity
// search, whose verdict the marker shows.
type dataMark struct {
	X, Y   float64
	Color  string
	Square bool
	Hollow bool // drawn in outline: a point that failed
	Title  string
}

// refKind says which way a reference line runs.
type refKind int

const (
	refVertical   refKind = iota // across the plot at X = V
	refHorizontal                // across the plot at Y = V
	refSegment                   // from From to To (the y = x line), unlabelled
)

// refLine is a line drawn for reference rather than data: a limit, an
// answer, the line of perfect agreement. It counts toward the axes'
// ranges, so a limit the data stay far below is still in sight.
type refLine struct {
	lineStyle
	Kind     refKind
	V        float64
	From, To xy
	Label    string
	// Row stacks the labels of vertical lines from the top, so that
	// the answers of several results do not overlap.
	Row int
}

// extent is the range of the values one axis must show.
type extent struct {
	max    float64
	minPos float64 // the smallest value above zero (0: none), where a log axis starts
}

func (e *extent) add(v float64) {
	e.max = math.Max(e.max, v)
	if v > 0 && !math.IsInf(v, 0) && (e.minPos == 0 || v < e.minPos) {
		e.minPos = v
	}
}

// render scales the chart's lines and marks into the plot area and lays
// out the ticks. A chart without a single point renders as its Empty
// message.
func (c *chart) render() plot {
	p := plot{ID: c.ID, Title: c.Title, Note: c.Note, W: plotW, H: plotH,
		Left: marginL, Top: marginT, Right: plotW - marginR, Bottom: plotH - marginB,
		Legend: c.Legend, MarkLegend: c.MarkLegend}
	var ex, ey extent
	points := 0
	for _, l := range c.Lines {
		for _, s := range l.Segs {
			for _, pt := range s {
				ex.add(pt.X)
				ey.add(pt.Y)
				points++
			}
		}
	}
	for _, m := range c.Marks {
		ex.add(m.X)
		ey.add(m.Y)
		points++
	}
	if points == 0 {
		p.Empty = c.Empty
		if p.Empty == "" {
			p.Empty = "no data"
		}
		return p
	}
	for _, r := range c.Refs {
		switch r.Kind {
		case refVertical:
			ex.add(r.V)
		case refHorizontal:
			ey.add(r.V)
		default:
			ex.add(r.From.X)
			ex.add(r.To.X)
			ey.add(r.From.Y)
			ey.add(r.To.Y)
		}
	}
	p.PW, p.PH = p.Right-p.Left, p.Bottom-p.Top
	p.XMid, p.YMid = (p.Left+p.Right)/2, (p.Top+p.Bottom)/2
	p.XTickY, p.YTickX, p.XLabelY = p.Bottom+17, p.Left-7, plotH-8
	xs := layoutAxis(c.X, ex)
	ys := layoutAxis(c.Y, ey)
	p.XLabel, p.YLabel = xs.label, ys.label
	sx := func(v float64) float64 { return p.Left + (p.Right-p.Left)*xs.frac(v) }
	sy := func(v float64) float64 { return p.Bottom - (p.Bottom-p.Top)*ys.frac(v) }
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
	for _, r := range c.Refs {
		p.Rules = append(p.Rules, p.placeRule(r, sx, sy))
	}
	for _, m := range c.Marks {
		p.Marks = append(p.Marks, newMark(round1(sx(m.X)), round1(sy(m.Y)), m))
	}
	return p
}

// placeRule scales a reference line and puts its label where it stays
// inside the plot: a vertical line's at the top, on whichever side has
// more room; a horizontal line's at the right end, above the line unless
// that would leave the plot.
func (p *plot) placeRule(r refLine, sx, sy func(float64) float64) rule {
	out := rule{lineStyle: r.lineStyle, Label: r.Label, Anchor: "start"}
	switch r.Kind {
	case refVertical:
		x := round1(sx(r.V))
		out.X1, out.Y1, out.X2, out.Y2 = x, p.Top, x, p.Bottom
		out.LX, out.LY = x+5, p.Top+16+17*float64(r.Row)
		if x > p.Left+0.6*(p.Right-p.Left) {
			out.LX, out.Anchor = x-5, "end"
		}
	case refHorizontal:
		y := round1(sy(r.V))
		out.X1, out.Y1, out.X2, out.Y2 = p.Left, y, p.Right, y
		out.LX, out.LY, out.Anchor = p.Right-5, y-5, "end"
		if y-5 < p.Top+14 {
			out.LY = y + 16
		}
	default:
		out.X1, out.Y1 = round1(sx(r.From.X)), round1(sy(r.From.Y))
		out.X2, out.Y2 = round1(sx(r.To.X)), round1(sy(r.To.Y))
		out.Label = ""
	}
	return out
}

// newMark draws m at (x, y); a legend draws its keys with it too.
func newMark(x, y float64, m dataMark) mark {
	out := mark{X: x, Y: y, X0: x - markSize/2, Y0: y - markSize/2, Square: m.Square, Color: m.Color, Fill: m.Color, Title: m.Title}
	if m.Hollow {
		out.Fill = "#fff"
	}
	return out
}

// markSize is the width of a marker, in SVG user units.
const markSize = 7

// laidAxis is an axis with its range fixed: it runs from bottom to top
// (in data units), linearly or, when log is set, logarithmically.
type laidAxis struct {
	bottom, top float64
	log         bool
	ticks       []fixedTick
	label       string
}

// frac is where v lies along the axis, from 0 at its start to 1 at its
// end; values outside the range are pinned to the ends (and on a log
// axis, so are zero and below).
func (a laidAxis) frac(v float64) float64 {
	if !a.log {
		return clamp01(v / a.top)
	}
	if !(v > 0) {
		return 0
	}
	return clamp01(math.Log10(v/a.bottom) / math.Log10(a.top/a.bottom))
}

func layoutAxis(a axisSpec, e extent) laidAxis {
	if len(a.Ticks) > 0 {
		return laidAxis{top: a.Max, ticks: a.Ticks, label: a.Label}
	}
	if a.Log {
		return layoutLogAxis(a, e)
	}
	maxV := e.max
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

// layoutLogAxis lays out a log axis over e's positive values: ticks at 1,
// 2 and 5 times each power of ten, or, past two decades where those would
// crowd, at the powers and at the ends that are not too close to one.
func layoutLogAxis(a axisSpec, e extent) laidAxis {
	lo, hi := e.minPos, e.max
	if !(lo > 0) || !(hi >= lo) || math.IsInf(hi, 0) {
		lo, hi = 1, 10 // nothing positive to show: one decade, as an empty linear axis shows 0 to 1
	}
	la := laidAxis{log: true, label: a.Label, bottom: logStep(lo, false), top: logStep(hi, true)}
	if la.top <= la.bottom {
		la.top = logStep(la.bottom*1.01, true)
	}
	inside := func(v float64) bool { return v >= la.bottom*(1-1e-9) && v <= la.top*(1+1e-9) }
	var vals []float64
	sparse := la.top/la.bottom > 100*(1+1e-9)
	for k := math.Floor(math.Log10(la.bottom)); k <= math.Ceil(math.Log10(la.top)); k++ {
		for _, m := range logSteps {
			if v := m * math.Pow(10, k); inside(v) && (!sparse || m == 1) {
				vals = append(vals, v)
			}
		}
	}
	if sparse {
		// An end less than half a decade from a power would print its
		// label over the power's.
		for _, end := range []float64{la.bottom, la.top} {
			near := false
			for _, v := range vals {
				near = near || math.Abs(math.Log10(end/v)) < 0.45
			}
			if !near {
				vals = append(vals, end)
			}
		}
		sort.Float64s(vals)
	}
	for _, v := range vals {
		u := a.Unit
		if a.UnitOf != nil {
			u = a.UnitOf(v)
		}
		if u.Div == 0 {
			u.Div = 1
		}
		la.ticks = append(la.ticks, fixedTick{v, strconv.FormatFloat(math.Round(v/u.Div*1e6)/1e6, 'f', -1, 64) + u.Suffix})
	}
	return la
}

// logSteps are the tick values of a log axis within each decade.
var logSteps = []float64{1, 2, 5}

// logStep is the 1-2-5 value nearest v at or above it (up) or at or
// below it.
func logStep(v float64, up bool) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	if up {
		for _, m := range []float64{1, 2, 5, 10} {
			if m*p >= v*(1-1e-9) {
				return m * p
			}
		}
		return 10 * p
	}
	for _, m := range []float64{5, 2, 1} {
		if m*p <= v*(1+1e-9) {
			return m * p
		}
	}
	return p
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
