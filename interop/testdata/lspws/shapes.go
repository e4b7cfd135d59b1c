// Package shapes is a tiny workspace that the interop tests open in gopls:
// a few declarations for textDocument/documentSymbol and hover to find.
package shapes

import "math"

// Circle is a circle of radius R.
type Circle struct {
	R float64
}

// Area returns the area of the circle.
func (c Circle) Area() float64 {
	return math.Pi * c.R * c.R
}

// Square is a square with sides of length S.
type Square struct {
	S float64
}

// Area returns the area of the square.
func (s Square) Area() float64 {
	return s.S * s.S
}

// Shape is anything with an area.
type Shape interface {
	Area() float64
}

// TotalArea adds up the areas of shapes.
func TotalArea(shapes ...Shape) float64 {
	total := 0.0
	for _, s := range shapes {
		total += s.Area()
	}
	return total
}
