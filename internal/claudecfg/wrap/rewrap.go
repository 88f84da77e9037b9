package wrap

import (
	"slices"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/mcp-heal/mcp-heal/internal/claudecfg"
)

// notKept is the detail of a remote entry wrapped with --keep: only a
// stdio server's process can be kept.
const notKept = "not kept: --keep applies to stdio servers only"

// keepOf is the duration of --keep in flags ("" when there is none).
func keepOf(flags []string) string {
	for i, f := range flags {
		if f == "--keep" && i+1 < len(flags) {
			return flags[i+1]
		}
		if v, ok := strings.CutPrefix(f, "--keep="); ok {
			return v
		}
	}
	return ""
}

// keptWords says that a stdio entry was wrapped with --keep ("" without).
func keptWords(flags []string) string {
	if d := keepOf(flags); d != "" {
		return "kept: its server keeps running " + d + " after Claude Code lets go of it, and the next session or /mcp reconnect re-attaches (--keep " + d + ")"
	}
	return ""
}

// rewrapEntry is wrap of an entry that already runs the shim (command,
// args): its shim path updated when another binary is asked for, and,
// when flags ask for --keep on a stdio entry, its --keep and --keep-env
// flags set to what a fresh wrap would write (wrap --keep after wrap
// --all once left --keep out without a word). The rest of the entry keeps
// its bytes.
func rewrapEntry(ch Change, e gjson.Result, command string, args []string, shimPath string, flags []string) (string, Change) {
	ch.Action = ActAlreadyWrapped
	if raw, ok := moveURL(e, args, shimPath); ok {
		ch.Action, ch.Detail = ActURLMoved, urlMovedWords
		if command != shimPath {
			ch.Detail = joinDetail(ch.Detail, "its shim path was "+command)
		}
		return raw, ch
	}
	var sp []splice
	if command != shimPath {
		m, _ := claudecfg.LastMember(e, "command")
		sp = append(sp, splice{m.Val.Index - e.Index, m.Val.Index - e.Index + len(m.Val.Raw), claudecfg.JSONString(shimPath)})
		ch.Action, ch.Detail = ActShimUpdated, "was "+command
	}
	shimWas := ""
	if ch.Action == ActShimUpdated {
		shimWas = "its shim path was " + command
	}
	inv, _ := claudecfg.ParseShimArgs(args)
	if d := keepOf(flags); d != "" {
		switch {
		case inv.Command == "":
			ch.Detail = joinDetail(ch.Detail, notKept)
		default:
			was := keepOf(args[:dashAt(args)])
			want := rekeep(args, withKeepEnv(flags, claudecfg.LastVal(e, "env")))
			if slices.Equal(want, args) {
				ch.Detail = joinDetail(ch.Detail, "kept already (--keep "+d+")")
				break
			}
			m, _ := claudecfg.LastMember(e, "args")
			st := detectStyle(e)
			sp = append(sp, splice{m.Val.Index - e.Index, m.Val.Index - e.Index + len(m.Val.Raw), st.strings(want, st.inner)})
			what := "was not kept"
			if was != "" {
				what = "was --keep " + was
			}
			ch.Action, ch.Detail = ActKeepSet, joinDetail(keptWords(flags)+"; "+what, shimWas)
		}
	}
	if len(sp) == 0 {
		return "", ch
	}
	return string(apply([]byte(e.Raw), sp)), ch
}

// dashAt is the index of the "--" that ends the shim's own flags
// (len(args) when there is none).
func dashAt(args []string) int {
	if i := slices.Index(args, "--"); i >= 0 {
		return i
	}
	return len(args)
}

// rekeep is a wrapped stdio entry's shim args with its --keep and
// --keep-env flags replaced by flags, placed where a fresh wrap puts
// them: right before the "--" that starts the server's command.
func rekeep(args, flags []string) []string {
	end := dashAt(args)
	var out []string
	for i := 0; i < end; i++ {
		a := args[i]
		switch {
		case a == "--keep" || a == "--keep-env":
			i++ // and its value
		case strings.HasPrefix(a, "--keep=") || strings.HasPrefix(a, "--keep-env="):
		default:
			out = append(out, a)
		}
	}
	out = append(out, flags...)
	return append(out, args[end:]...)
}
