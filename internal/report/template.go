package report

import "html/template"

// pageTemplate is the whole page. html/template escapes every value for
// the context it lands in (text, attribute, the RCDATA of an SVG title);
// nothing here is marked safe, so no value can become markup. The CSP
// forbids scripts outright as a second wall, and everything the page needs
// is inline, so it opens offline and fetches nothing.
var pageTemplate = template.Must(template.New("page").Parse(pageHTML))

const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="rpcload">
<title>{{.Title}}</title>
<style>
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: #222; background: #fff; max-width: 1240px; margin: 0 auto; padding: 16px 20px 40px; }
h1 { font-size: 1.5em; margin: .2em 0 .3em; }
h2 { font-size: 1.25em; margin: 1.8em 0 .6em; padding-bottom: 4px; border-bottom: 1px solid #ddd; }
h3 { font-size: 1.05em; margin: 1.3em 0 .4em; }
p { margin: .4em 0; }
.files { display: flex; flex-wrap: wrap; gap: 4px 18px; }
.files span, .legend span { white-space: nowrap; }
nav { font-size: 13px; color: #555; }
nav a { color: #1f5fa8; margin-right: 12px; text-decoration: none; }
.tablewrap { overflow-x: auto; margin: .4em 0 1em; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
caption { text-align: left; font-weight: 600; padding: 4px 0; }
th, td { padding: 3px 10px; border-bottom: 1px solid #e6e6e6; text-align: left; vertical-align: top; }
th { background: #f5f6f8; font-weight: 600; white-space: nowrap; }
td.num { text-align: right; white-space: nowrap; }
td.key { font-weight: 600; color: #333; }
td.name { overflow-wrap: anywhere; min-width: 8em; max-width: 28em; }
td.group { border-top: 2px solid #c8c8c8; }
td.why { min-width: 20em; }
.fail { color: #b00020; font-weight: 600; }
.warn { color: #8a5a00; }
.pass { color: #1b7a3a; font-weight: 600; }
pre { margin: 2px 0 4px; padding: 4px 6px; background: #f5f6f8; border-radius: 3px; white-space: pre-wrap; overflow-wrap: anywhere; font: 12px/1.35 ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace; max-width: 80ch; }
.label { color: #555; font-size: 12px; }
.warnings { background: #fff7e0; border: 1px solid #f0d48a; border-radius: 3px; padding: 6px 12px; margin: .6em 0; }
.warnings ul { margin: .2em 0; padding-left: 1.2em; }
.plots { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 560px), 1fr)); gap: 0 32px; }
figure { margin: .8em 0 1.6em; break-inside: avoid; min-width: 0; }
figcaption { margin-bottom: 6px; }
figcaption .note { color: #555; font-size: 13px; }
.plotwrap { overflow-x: auto; }
svg.plot { display: block; width: 100%; min-width: 460px; height: auto; }
svg.plot text { font-family: inherit; font-size: 14px; fill: #333; }
svg.plot .grid { stroke: #e9e9e9; stroke-width: 1; }
svg.plot .frame { fill: none; stroke: #aaa; stroke-width: 1; }
svg.plot text.ref { fill: currentColor; font-size: 13px; paint-order: stroke; stroke: #fff; stroke-width: 3px; stroke-linejoin: round; }
p.verdict { font-size: 1.1em; }
svg.sw { vertical-align: middle; margin-right: 4px; }
.legend { display: flex; flex-wrap: wrap; gap: 2px 18px; font-size: 13px; margin-top: 4px; }
.empty { color: #666; font-style: italic; padding: 28px 12px; border: 1px dashed #ccc; text-align: center; max-width: 880px; }
.notes { color: #555; font-size: 13px; }
footer { margin-top: 3em; color: #777; font-size: 12px; }
@media (max-width: 600px) { body { padding: 8px; } th, td { padding: 2px 6px; } }
@media print {
  body { max-width: none; padding: 0; font-size: 11px; }
  nav { display: none; }
  .tablewrap, .plotwrap { overflow: visible; }
  .plots { display: block; }
  svg.plot { min-width: 0; max-width: 100%; }
  h2, h3 { break-after: avoid; }
  tr, pre { break-inside: avoid; }
  section.result { break-before: page; }
}
</style>
</head>
<body>
{{define "swatch"}}<svg class="sw" width="26" height="10" aria-hidden="true"><line x1="1" y1="5" x2="25" y2="5" stroke="{{.Color}}" stroke-width="3" stroke-dasharray="{{.Dash}}"/></svg>{{end}}
{{define "mark"}}{{if .Square}}<rect x="{{.X0}}" y="{{.Y0}}" width="7" height="7" fill="{{.Fill}}" stroke="{{.Color}}" stroke-width="1.5">{{with .Title}}<title>{{.}}</title>{{end}}</rect>{{else}}<circle cx="{{.X}}" cy="{{.Y}}" r="3.5" fill="{{.Fill}}" stroke="{{.Color}}" stroke-width="1.5">{{with .Title}}<title>{{.}}</title>{{end}}</circle>{{end}}{{end -}}
{{define "section"}}<h3>{{with .Style}}{{template "swatch" .}}{{end}}{{.Title}}</h3>
{{range .Paras}}<p>{{.}}</p>
{{end}}{{range .Tables}}{{template "table" .}}{{end}}{{if .Notes}}<div class="notes">{{range .Notes}}<p>{{.}}</p>{{end}}</div>
{{end}}{{end -}}
{{define "table"}}<div class="tablewrap"><table>{{with .Caption}}<caption>{{.}}</caption>{{end}}
{{if .Head}}<thead><tr>{{range .Head}}<th>{{with .Swatch}}{{template "swatch" .}}{{end}}{{.Text}}</th>{{end}}</tr></thead>{{end}}
<tbody>{{range .Rows}}
<tr>{{range .}}<td{{with .Class}} class="{{.}}"{{end}}>{{with .Swatch}}{{template "swatch" .}}{{end}}{{.Text}}{{range .Blocks}}<div class="sample">{{with .Label}}<div class="label">{{.}}</div>{{end}}<pre>{{.Pre}}</pre></div>{{end}}</td>{{end}}</tr>{{end}}
</tbody></table></div>
{{end}}
{{define "plot"}}<figure id="{{.ID}}">
<figcaption><strong>{{.Title}}</strong><br><span class="note">{{.Note}}</span></figcaption>
{{if .Empty}}<p class="empty">{{.Empty}}</p>{{else}}<div class="plotwrap">
<svg class="plot" viewBox="0 0 {{.W}} {{.H}}" role="img" aria-label="{{.Title}}">
<rect class="frame" x="{{.Left}}" y="{{.Top}}" width="{{.PW}}" height="{{.PH}}"/>
{{range .YTicks}}<line class="grid" x1="{{$.Left}}" x2="{{$.Right}}" y1="{{.Pos}}" y2="{{.Pos}}"/><text x="{{$.YTickX}}" y="{{.Pos}}" dy="4" text-anchor="end">{{.Label}}</text>
{{end}}{{range .XTicks}}<line class="grid" x1="{{.Pos}}" x2="{{.Pos}}" y1="{{$.Top}}" y2="{{$.Bottom}}"/><text x="{{.Pos}}" y="{{$.XTickY}}" text-anchor="middle">{{.Label}}</text>
{{end}}<text x="{{.XMid}}" y="{{.XLabelY}}" text-anchor="middle">{{.XLabel}}</text>
<text transform="translate(14 {{.YMid}}) rotate(-90)" text-anchor="middle">{{.YLabel}}</text>
{{range $l := .Lines}}{{range .Segments}}<polyline points="{{.}}" fill="none" stroke="{{$l.Color}}" stroke-width="1.8" stroke-dasharray="{{$l.Dash}}" stroke-linejoin="round"><title>{{$l.Name}}</title></polyline>
{{end}}{{end}}{{range .Rules}}<line x1="{{.X1}}" y1="{{.Y1}}" x2="{{.X2}}" y2="{{.Y2}}" stroke="{{.Color}}" stroke-width="1.2" stroke-dasharray="{{.Dash}}"/>
{{if .Label}}<text class="ref" x="{{.LX}}" y="{{.LY}}" text-anchor="{{.Anchor}}" color="{{.Color}}">{{.Label}}</text>
{{end}}{{end}}{{range .Marks}}{{template "mark" .}}
{{end}}</svg></div>
<div class="legend">{{range .Legend}}<span>{{template "swatch" .}}{{.Label}}</span>{{end}}{{range .MarkLegend}}<span><svg class="sw" width="14" height="10" aria-hidden="true">{{template "mark" .}}</svg>{{.Label}}</span>{{end}}</div>{{end}}
</figure>
{{end}}
<header>
<h1>rpcload report</h1>
<div class="files">{{range .Files}}<span>{{template "swatch" .}}{{.Label}}</span>{{end}}</div>
<nav>{{if .Capacity}}<a href="#capacity">capacity</a>{{end}}<a href="#summary">summary</a>{{if .Comparison}}<a href="#comparison">comparison</a>{{end}}<a href="#plots">plots</a>{{range .Details}}<a href="#{{.ID}}">{{.Name}}</a>{{end}}</nav>
</header>
<main>
{{with .Capacity}}<section id="capacity">
<h2>Capacity</h2>
{{range .Verdicts}}<p class="verdict">{{with .Style}}{{template "swatch" .}}{{end}}{{with .Name}}{{.}}: {{end}}<strong class="{{.Class}}">{{.Text}}</strong></p>
{{end}}{{range .Paras}}<p>{{.}}</p>
{{end}}<div class="plots">{{range .Plots}}{{template "plot" .}}{{end}}</div>
{{if .Notes}}<div class="notes">{{range .Notes}}<p>{{.}}</p>{{end}}</div>
{{end}}{{range .Results}}{{template "section" .}}{{end}}
</section>
{{end}}<section id="summary">
<h2>Summary</h2>
{{template "table" .Summary}}
</section>
{{if .Comparison}}<section id="comparison">
<h2>Comparison</h2>
{{if .LoadDifferences}}<div class="warnings"><strong>Not the same load</strong><ul>{{range .LoadDifferences}}<li>{{.}}</li>{{end}}</ul>The figures differ for that reason too.</div>{{end}}
<p>Per method, side by side; ratios are to the first result. Latency is corrected (reply − intended send time); answered/s is per second of sending; error rate = (rpc errors + invalid + transport errors + timeouts + leaked) / sent.</p>
{{template "table" .Comparison}}
</section>
{{end}}<section id="plots">
<h2>Plots</h2>
<div class="plots">{{range .Plots}}{{template "plot" .}}{{end}}</div>
{{if .PlotNotes}}<div class="notes">{{range .PlotNotes}}<p>{{.}}</p>{{end}}</div>{{end}}
</section>
{{range .Details}}<section class="result" id="{{.ID}}">
<h2>{{template "swatch" .Style}}{{.Name}}</h2>
{{if .Warnings}}<div class="warnings"><strong>Warnings</strong><ul>{{range .Warnings}}<li>{{.}}</li>{{end}}</ul></div>{{end}}
{{range .Sections}}{{template "section" .}}{{end}}
</section>
{{end}}</main>
<footer>Written by rpcload. The page is self-contained: it runs no script and loads nothing.</footer>
</body>
</html>
`
