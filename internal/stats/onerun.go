package stats

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// notOfTheRun are the settings the shards of one run may differ in: the
// shard itself, and the seed each shard draws when --seed is not given.
var notOfTheRun = []string{"shard", "seed"}

// OneRun checks that parts are the shards of one run, as "rpcload merge"
// expects them: each part a shard (--shard i/n), or a merge of shards, and
// all of them with the same target and the same settings but for the shard
// and the seed. (Merge itself checks that the shards are distinct shards of
// the same count.) The error names the file at fault and what differs;
// paths name the parts, as for Merge. One part is always one run.
func OneRun(parts []*Result, paths []string) error {
	if len(parts) < 2 {
		return nil
	}
	for i, p := range parts {
		if p == nil {
			return fmt.Errorf("stats: %s: no result", paths[i])
		}
		if len(p.MergedFrom) == 0 {
			if p.Shard == nil {
				return fmt.Errorf("stats: %s is not a shard (its run had no --shard i/n): only the shards of one run are merged", paths[i])
			}
			continue
		}
		for _, mp := range p.MergedFrom {
			if mp.Shard == nil {
				return fmt.Errorf("stats: %s was merged from %s, which is not a shard (its run had no --shard i/n): only the shards of one run are merged", paths[i], mp.Path)
			}
		}
	}
	first := parts[0]
	for i, p := range parts[1:] {
		var diffs []string
		if p.Target != first.Target {
			diffs = append(diffs, fmt.Sprintf("target %s against %s", first.Target, p.Target))
		}
		diffs = append(diffs, settingsDiff(first.Settings, p.Settings)...)
		if len(diffs) > 0 {
			return fmt.Errorf("stats: %s and %s are not shards of one run: %s", paths[0], paths[i+1], strings.Join(diffs, "; "))
		}
	}
	return nil
}

// settingsDiff lists the settings a and b give differently ("rate 100
// against 200"; "max_rate 50 against none"), in key order, leaving out
// those the shards of one run may differ in.
func settingsDiff(a, b map[string]any) []string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		if slices.Contains(notOfTheRun, k) {
			continue
		}
		va, oka := a[k]
		vb, okb := b[k]
		if oka && okb && reflect.DeepEqual(va, vb) {
			continue
		}
		out = append(out, fmt.Sprintf("%s %s against %s", k, settingOrNone(va, oka), settingOrNone(vb, okb)))
	}
	return out
}

// settingOrNone is settingText, or "none" for a setting a result lacks.
func settingOrNone(v any, ok bool) string {
	if !ok {
		return "none"
	}
	return settingText(v)
}
