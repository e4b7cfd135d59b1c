package soak

import (
	"math"
	"slices"

	"github.com/rpcload/rpcload/internal/stats"
)

// line is a least-squares line y = a + b·x with what its fit says.
type line struct {
	a, b   float64
	r2     float64
	se     float64 // the standard error of b
	sigma  float64 // the residuals' standard deviation
	x0, x1 float64
}

func (l line) at(x float64) float64 { return l.a + l.b*x }

// fit fits y = a + b·x by least squares. ok is false when no line is
// defined: fewer than two points, or all at the same x. A figure that
// never moves fits its line exactly and gets R² = 1 (the textbook formula
// would divide zero by zero).
func fit(x, y []float64) (l line, ok bool) {
	n := len(x)
	if n < 2 {
		return l, false
	}
	mx, my := mean(x), mean(y)
	var sxx, sxy, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxx += dx * dx
		sxy += dx * dy
		syy += dy * dy
	}
	if sxx == 0 {
		return l, false
	}
	l.b = sxy / sxx
	l.a = my - l.b*mx
	l.r2 = 1
	if syy > 0 {
		l.r2 = sxy * sxy / (sxx * syy)
	}
	sse := max(0, syy-l.b*sxy)
	if n > 2 {
		l.sigma = math.Sqrt(sse / float64(n-2))
		l.se = l.sigma / math.Sqrt(sxx)
	}
	l.x0, l.x1 = x[0], x[n-1]
	return l, true
}

// fitLine is fit as a Growth per unit of x.
func fitLine(x, y []float64) *stats.Growth {
	l, ok := fit(x, y)
	if !ok {
		return nil
	}
	return &stats.Growth{PerHour: l.b, R2: l.r2, First: l.at(l.x0), Last: l.at(l.x1)}
}

// MaxVIF is the largest variance inflation a column of the fates'
// regression may have for its slope to be reported: past it, the fates
// grew in so nearly fixed proportions that the data cannot tell which of
// them the growth follows (10 is the usual rule of thumb).
const MaxVIF = 10

// multiFit fits y = a + Σ b_j·x_j by least squares (the columns of xs,
// each as long as y). It returns the slopes, their standard errors and
// each column's variance inflation factor (how much its slope's variance
// grows because the other columns move with it: 1 when they are
// unrelated). ok is false when the system is singular or has too few
// points for its columns.
func multiFit(xs [][]float64, y []float64) (b, se, vif []float64, ok bool) {
	k, n := len(xs), len(y)
	if k == 0 || n <= k+1 {
		return nil, nil, nil, false
	}
	means := make([]float64, k)
	for j := range xs {
		means[j] = mean(xs[j])
	}
	my := mean(y)
	// The centred normal equations S·b = s (the intercept drops out).
	S := make([][]float64, k)
	s := make([]float64, k)
	for j := range k {
		S[j] = make([]float64, k)
		for i := range n {
			s[j] += (xs[j][i] - means[j]) * (y[i] - my)
		}
		for m := range k {
			for i := range n {
				S[j][m] += (xs[j][i] - means[j]) * (xs[m][i] - means[m])
			}
		}
	}
	inv, ok := invert(S)
	if !ok {
		return nil, nil, nil, false
	}
	b = make([]float64, k)
	for j := range k {
		for m := range k {
			b[j] += inv[j][m] * s[m]
		}
	}
	var sse float64
	for i := range n {
		r := y[i] - my
		for j := range k {
			r -= b[j] * (xs[j][i] - means[j])
		}
		sse += r * r
	}
	sigma2 := sse / float64(n-k-1)
	se = make([]float64, k)
	vif = make([]float64, k)
	for j := range k {
		se[j] = math.Sqrt(max(0, sigma2*inv[j][j]))
		vif[j] = S[j][j] * inv[j][j]
	}
	return b, se, vif, true
}

// invert inverts a small symmetric matrix by Gauss-Jordan elimination
// with partial pivoting; ok is false when it is singular (a pivot below
// 1e-12 of the largest diagonal entry).
func invert(m [][]float64) ([][]float64, bool) {
	k := len(m)
	a := make([][]float64, k)
	var scale float64
	for i := range k {
		a[i] = make([]float64, 2*k)
		copy(a[i], m[i])
		a[i][k+i] = 1
		scale = max(scale, math.Abs(m[i][i]))
	}
	if scale == 0 {
		return nil, false
	}
	for c := range k {
		p := c
		for r := c + 1; r < k; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		if math.Abs(a[p][c]) < 1e-12*scale {
			return nil, false
		}
		a[c], a[p] = a[p], a[c]
		piv := a[c][c]
		for j := range 2 * k {
			a[c][j] /= piv
		}
		for r := range k {
			if r == c || a[r][c] == 0 {
				continue
			}
			f := a[r][c]
			for j := range 2 * k {
				a[r][j] -= f * a[c][j]
			}
		}
	}
	out := make([][]float64, k)
	for i := range k {
		out[i] = a[i][k:]
	}
	return out, true
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// median is the middle value of v (the mean of the two middle ones for an
// even count); v is not changed.
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
