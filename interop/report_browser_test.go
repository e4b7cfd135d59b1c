package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/audits"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// chromiumPath is where Debian's chromium package puts the browser
// (.ci/browser-deps installs it).
const chromiumPath = "/usr/bin/chromium"

// scriptPayload is the error message a hostile server would send: if the
// report let it through as markup, the page's title would change.
const scriptPayload = `<script>document.title='pwned'</script>`

// startReferenceServer runs `rpcload serve --tcp 127.0.0.1:0` and returns
// the tcp:// URL it prints; the test's cleanup interrupts it.
func startReferenceServer(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, rpcloadPath, "serve", "--tcp", "127.0.0.1:0")
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 5 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("rpcload serve: %v", err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if _, url, ok := strings.Cut(sc.Text(), "serving JSON-RPC over TCP on "); ok {
				found <- url
				break
			}
		}
		close(found)
		for sc.Scan() { // keep the pipe drained until the server exits
		}
	}()
	select {
	case url, ok := <-found:
		if !ok {
			t.Fatalf("rpcload serve ended without saying where it listens; stderr:\n%s", stderr.String())
		}
		return url
	case <-time.After(30 * time.Second):
		t.Fatalf("rpcload serve said nothing for 30 s; stderr:\n%s", stderr.String())
	}
	return ""
}

// rpcloadCmd runs the rpcload binary with args (at most 60 s) and returns
// its exit code and combined output.
func rpcloadCmd(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, rpcloadPath, args...)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	var exitErr *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("rpcload %s: killed after 60 s\n%s", strings.Join(args, " "), out)
	case errors.As(err, &exitErr):
		return exitErr.ExitCode(), string(out)
	case err != nil:
		t.Fatalf("rpcload %s: %v", strings.Join(args, " "), err)
	}
	return 0, string(out)
}

// hostileCopy writes a copy of the result file src to dst in which a server
// chose every string it can: an error message, a method name, a violation's
// frame, and a warning carrying the payload; and a long call name beside
// them. The file is edited as generic
// JSON so every other field stays as the real run wrote it.
func hostileCopy(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	r["error_codes"] = map[string]any{"-32000": 1}
	r["error_messages"] = map[string]any{"-32000": []any{scriptPayload}}
	r["violations"] = map[string]any{"unknown_id": 1}
	r["violation_samples"] = map[string]any{"unknown_id": []any{map[string]any{"method": scriptPayload, "frame": `{"jsonrpc":"2.0","id":99,"result":"` + scriptPayload + `"}`}}}
	r["warnings"] = []any{scriptPayload}
	if methods, ok := r["methods"].(map[string]any); ok {
		if echo, ok := methods["echo"]; ok {
			methods[scriptPayload] = echo
			methods[longCallName] = echo
			delete(methods, "echo")
		}
	}
	out, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// longCallName is a call name as long as a scenario may give one: the
// per-method tables must stay within the page with it.
const longCallName = "a_call_name_from_a_scenario_that_goes_on_and_on_for_a_while_longer"

// browserEvents collects what the page reports: console calls, uncaught
// exceptions, browser log entries and inspector issues (CSP violations).
type browserEvents struct {
	mu     sync.Mutex
	all    []string // every event, for the failure message
	errs   []string // console errors, exceptions, log errors, CSP issues
	notify chan struct{}
}

func (b *browserEvents) add(ev any) {
	var line string
	bad := false
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		var parts []string
		for _, a := range e.Args {
			parts = append(parts, string(a.Value)+a.Description)
		}
		line = fmt.Sprintf("console.%s %s", e.Type, strings.Join(parts, " "))
		bad = e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert
	case *runtime.EventExceptionThrown:
		line = "exception " + e.ExceptionDetails.Text
		if e.ExceptionDetails.Exception != nil {
			line += " " + e.ExceptionDetails.Exception.Description
		}
		bad = true
	case *log.EventEntryAdded:
		line = fmt.Sprintf("log %s/%s %s", e.Entry.Source, e.Entry.Level, e.Entry.Text)
		bad = e.Entry.Level == log.EntryLevelError
	case *audits.EventIssueAdded:
		line = fmt.Sprintf("issue %s", e.Issue.Code)
		bad = e.Issue.Code == audits.InspectorIssueCodeContentSecurityPolicyIssue
	default:
		return
	}
	b.mu.Lock()
	b.all = append(b.all, line)
	if bad {
		b.errs = append(b.errs, line)
	}
	b.mu.Unlock()
	select {
	case b.notify <- struct{}{}:
	default:
	}
}

func (b *browserEvents) snapshot() (all, errs []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.all...), append([]string(nil), b.errs...)
}

// waitFor waits until an event line contains one of wants, or ctx ends.
func (b *browserEvents) waitFor(ctx context.Context, wants ...string) bool {
	for {
		all, _ := b.snapshot()
		for _, l := range all {
			for _, w := range wants {
				if strings.Contains(l, w) {
					return true
				}
			}
		}
		select {
		case <-b.notify:
		case <-ctx.Done():
			return false
		}
	}
}

// plotInfo is what the page says about one plot's SVG.
type plotInfo struct {
	ID     string `json:"id"`
	Points []int  `json:"points"` // per path or polyline
}

// pageFacts is what the test reads from the rendered page.
type pageFacts struct {
	Title   string     `json:"title"`
	Scripts int        `json:"scripts"`
	Text    string     `json:"text"`
	Plots   []plotInfo `json:"plots"`
	Figures int        `json:"figures"`
	Empty   int        `json:"empty"`
	// Clipped names the tables wider than their box: part of them is out
	// of sight.
	Clipped []string `json:"clipped"`
}

const pageFactsJS = `(() => ({
	title: document.title,
	scripts: document.scripts.length,
	text: document.body.innerText,
	figures: document.querySelectorAll('figure').length,
	empty: document.querySelectorAll('figure .empty').length,
	clipped: Array.from(document.querySelectorAll('.tablewrap')).filter(w => w.scrollWidth > w.clientWidth + 1).map(w =>
		Array.from(w.querySelectorAll('th')).map(th => th.textContent).join('|') + ' (' + w.scrollWidth + ' px in ' + w.clientWidth + ')'),
	plots: Array.from(document.querySelectorAll('svg.plot')).map(svg => ({
		id: svg.closest('figure') ? svg.closest('figure').id : '',
		points: Array.from(svg.querySelectorAll('path, polyline')).map(el =>
			el.tagName.toLowerCase() === 'polyline' ? el.points.numberOfItems
				: ((el.getAttribute('d') || '').match(/[0-9.]+[ ,][0-9.]+/g) || []).length),
	})),
}))()`

// TestReportInBrowser renders the HTML report of a real run and of a copy
// carrying a script from a hostile server, opens it in headless Chromium and
// checks what a person would see: every plot drawn, the script shown as
// text and never run, no errors, and a CSP that blocks scripts.
func TestReportInBrowser(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		missingDep(t, "%s is not installed (bash .ci/browser-deps installs it)", chromiumPath)
	}
	if buildErr != nil {
		t.Fatalf("cannot run rpcload: %v", buildErr)
	}
	dir := t.TempDir()
	url := startReferenceServer(t)
	real := filepath.Join(dir, "real.json")
	if code, out := rpcloadCmd(t, "run", url, "--method", "echo", "--params", `[1,"a"]`, "--rate", "500",
		"--duration", "2s", "--interval", "200ms", "-q", "-o", real); code != 0 {
		t.Fatalf("rpcload run: exit %d\n%s", code, out)
	}
	hostile := filepath.Join(dir, "hostile.json")
	hostileCopy(t, real, hostile)
	page := filepath.Join(dir, "report.html")
	if code, out := rpcloadCmd(t, "report", real, hostile, "--html", page); code != 0 {
		t.Fatalf("rpcload report --html: exit %d\n%s", code, out)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(html, []byte(scriptPayload)) {
		t.Fatal("the HTML file holds the payload unescaped")
	}

	events := &browserEvents{notify: make(chan struct{}, 1)}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(chromiumPath),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 900),
	)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx, chromedp.WithListener(events.add))
	defer cancelBrowser()
	err = chromedp.Do(bctx,
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, audits.Enable, cdp.Empty{})
			return err
		}),
		chromedp.Navigate("file://"+page),
	)
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	facts, err := chromedp.Run(bctx, chromedp.Evaluate[pageFacts](pageFactsJS))
	if err != nil {
		t.Fatalf("reading the page: %v", err)
	}

	wantTitle := "rpcload report: real.json and 1 more"
	if facts.Title != wantTitle {
		t.Errorf("document.title = %q, want %q", facts.Title, wantTitle)
	}
	if facts.Scripts != 0 {
		t.Errorf("document.scripts.length = %d, want 0", facts.Scripts)
	}
	if n := strings.Count(facts.Text, scriptPayload); n < 3 {
		t.Errorf("the payload shows %d times as visible text, want it at least as the error message, the frame and the warning", n)
	}
	if facts.Empty != 0 || facts.Figures != len(facts.Plots) {
		t.Errorf("%d figures, %d plots, %d saying they have no data: want every figure plotted", facts.Figures, len(facts.Plots), facts.Empty)
	}
	for _, c := range facts.Clipped {
		t.Errorf("a table is clipped at 1400 px wide: %s", c)
	}
	ids := map[string]bool{}
	for _, p := range facts.Plots {
		ids[p.ID] = true
		if len(p.Points) == 0 {
			t.Errorf("plot %s draws no line", p.ID)
		}
		for _, n := range p.Points {
			if n < 3 {
				t.Errorf("plot %s has a line of %d points, want several", p.ID, n)
			}
		}
	}
	for _, id := range []string{"plot-spectrum", "plot-throughput", "plot-inflight", "plot-latency", "plot-errors"} {
		if !ids[id] {
			t.Errorf("no plot %s (plots: %v)", id, facts.Plots)
		}
	}

	t.Logf("title %q, %d scripts, plots %v", facts.Title, facts.Scripts, facts.Plots)
	if _, errs := events.snapshot(); len(errs) > 0 {
		t.Errorf("the page reported errors:\n  %s", strings.Join(errs, "\n  "))
	}

	// The listener and the CSP at work: a script DevTools injects is
	// refused by the page's policy and reported, and the title stays.
	probe := `(() => { const s = document.createElement('script'); s.textContent = "document.title='pwned'"; document.body.appendChild(s); return document.title; })()`
	title, err := chromedp.Run(bctx, chromedp.Evaluate[string](probe))
	if err != nil {
		t.Fatalf("probe: %v", err)
	}
	if title != wantTitle {
		t.Errorf("an injected inline script ran (title %q): the page's CSP does not forbid scripts", title)
	}
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	reported := events.waitFor(wctx, "Content Security Policy", "ContentSecurityPolicyIssue")
	all, _ := events.snapshot()
	if !reported {
		t.Errorf("the CSP refusal of an injected script was not reported; events seen:\n  %s", strings.Join(all, "\n  "))
	}
	t.Logf("events:\n  %s", strings.Join(all, "\n  "))
}
