// Package report renders result files as one self-contained HTML page:
// tables of everything a Result holds and SVG plots of its latency
// histogram and time series, drawn here, with no script and nothing fetched.
//
// Every string that comes from a result (method names, error messages,
// frames the server sent, targets, file names) is escaped by html/template,
// and the page's Content-Security-Policy forbids scripts, so a server
// cannot put markup or code into the report of its own test.
package report

import (
	"errors"
	"fmt"
	"io"

	"github.com/rpcload/rpcload/internal/stats"
)

// Input is one result to render, with the name that labels it (usually its
// file's name).
type Input struct {
	Name   string
	Result *stats.Result
}

// WriteHTML writes the report of in as one HTML document. With several
// inputs the page overlays them in every plot, in the order given, and adds
// the side-by-side comparison with ratios to the first. It returns an error
// when in is empty, an input has no result, or writing fails.
func WriteHTML(w io.Writer, in []Input) error {
	if len(in) == 0 {
		return errors.New("report: no results to render")
	}
	for i, x := range in {
		if x.Result == nil {
			return fmt.Errorf("report: input %d (%q) has no result", i+1, x.Name)
		}
	}
	if err := pageTemplate.Execute(w, buildPage(in)); err != nil {
		return fmt.Errorf("report: writing the HTML: %w", err)
	}
	return nil
}

// page is what the template renders.
type page struct {
	Title string
	Files []legendEntry
	// Capacity, when some input holds a capacity search, comes first:
	// its answer is what such a run is for.
	Capacity   *capacityView
	Summary    table
	Comparison *table // several inputs only
	// LoadDifferences warn above the comparison that the results ran
	// under different loads.
	LoadDifferences []string
	Plots           []plot
	PlotNotes       []string
	Details         []detail
}

// detail is the section of one result.
type detail struct {
	ID    string
	Name  string
	Style lineStyle
	// Warnings come first: they say when the figures below are not what
	// was asked for.
	Warnings []string
	Sections []section
}

// section is a titled part of a result's detail: paragraphs, then tables,
// then notes in small print.
type section struct {
	Title  string
	Style  *lineStyle // a swatch before the title, where the result is not otherwise shown
	Paras  []string
	Tables []table
	Notes  []string
}

// table is a plain table; the first column usually names the row.
type table struct {
	Caption string
	Head    []cell
	Rows    [][]cell
}

// cell is one table cell: text, an optional swatch of a result's color,
// and optional preformatted blocks (frames, messages) under the text.
type cell struct {
	Text   string
	Class  string // num, pass, fail, warn: how the stylesheet shows it
	Swatch *lineStyle
	Blocks []block
}

// block is a preformatted sample with a label above it.
type block struct {
	Label string
	Pre   string
}

func txt(s string) cell { return cell{Text: s} }
func num(s string) cell { return cell{Text: s, Class: "num"} }
func dash() cell        { return cell{Text: stats.NoValue, Class: "num"} }

func buildPage(in []Input) page {
	es := make([]entry, len(in))
	for i, x := range in {
		name := x.Name
		if name == "" {
			name = fmt.Sprintf("result %d", i+1)
		}
		es[i] = entry{Index: i, Name: name, R: x.Result}
	}
	pg := page{Title: "rpcload report: " + es[0].Name}
	if len(es) > 1 {
		pg.Title = fmt.Sprintf("rpcload report: %s and %d more", es[0].Name, len(es)-1)
	}
	for _, e := range es {
		pg.Files = append(pg.Files, legendEntry{resultStyle(e.Index), e.Name})
	}
	pg.Capacity = capacitySection(es)
	pg.Summary = summaryTable(es)
	if len(es) > 1 {
		c, diffs := comparisonTable(es)
		pg.Comparison, pg.LoadDifferences = &c, diffs
	}
	spectrum, notes := spectrumChart(es)
	pg.Plots = append(pg.Plots, spectrum.render())
	pg.PlotNotes = notes
	for _, c := range timeCharts(es) {
		pg.Plots = append(pg.Plots, c.render())
	}
	for _, c := range append(serverGaugeCharts(es), soakCharts(es)...) {
		pg.Plots = append(pg.Plots, c.render())
	}
	for _, e := range es {
		pg.Details = append(pg.Details, resultDetail(e))
	}
	return pg
}
