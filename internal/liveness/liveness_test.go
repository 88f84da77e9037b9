package liveness

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A script is a sequence of steps at seconds since the server came up:
// "3 due" asks Due with the call given by the case, "4 heard", "5 answered",
// "6 unanswered", "7 cancel", "8 cpu 1500ms", "9 nocall" (calls end),
// "9 call" (a call is sent now). Each "due" line names the action wanted:
// "none", "probe call", "kill cancel", ...
type step struct {
	at   float64
	what string
	want string
}

func TestDetector(t *testing.T) {
	look, pt := DefaultLook, DefaultPingTimeout
	cases := []struct {
		name  string
		cfg   Config
		call  float64 // when the call went out; <0: none
		steps []step
	}{
		{name: "silence alone never kills: a 90 s call deaf to pings", call: 0, steps: []step{
			{2.9, "due", "none"},
			{3, "due", "probe call"},
			{3.5, "due", "none"},
			{13, "unanswered", ""},
			{13, "due", "none"},
			{45, "due", "none"},
			{90, "due", "none"},
			{90, "heard", ""},
			{90, "due", "none"},
		}},
		{name: "a busy server answering pings is pinged after each look of silence", call: 0, steps: []step{
			{3, "due", "probe call"},
			{3.1, "answered", ""},
			{6, "due", "none"},
			{6.1, "due", "probe call"},
			{6.2, "answered", ""},
		}},
		{name: "one ping per silence: a deaf server gets no second", call: 0, steps: []step{
			{3, "due", "probe call"},
			{13, "unanswered", ""},
			{20, "due", "none"},
			{60, "due", "none"},
		}},
		{name: "cancel, then deaf to a ping: not answering, never killed by default", call: 0, steps: []step{
			{1, "cancel", ""},
			{1, "nocall", ""},
			{1, "due", "probe cancel"},
			{10.9, "cancelled", "no"},
			{11, "unanswered", ""},
			{11, "due", "none"},
			{11, "cancelled", "since 1"},
			{600, "due", "none"},
			{600, "cancelled", "since 1"},
			{601, "heard", ""},
			{601, "cancelled", "no"},
		}},
		{name: "--kill-on-cancel: cancel, then deaf to a ping: killed PingTimeout after the ping", cfg: Config{KillOnCancel: true}, call: 0, steps: []step{
			{1, "cancel", ""},
			{1, "nocall", ""},
			{1, "due", "probe cancel"},
			{10.9, "due", "none"},
			{11, "due", "kill cancel"},
		}},
		{name: "--kill-on-cancel: cancel after a ping already unanswered: killed PingTimeout after the cancel", cfg: Config{KillOnCancel: true}, call: 0, steps: []step{
			{3, "due", "probe call"},
			{13, "unanswered", ""},
			{30, "cancel", ""},
			{30, "due", "none"},
			{39.9, "due", "none"},
			{39.9, "cancelled", "no"},
			{40, "cancelled", "since 30"},
			{40, "due", "kill cancel"},
		}},
		{name: "a gap in the shim's ticks is no silence: --hang-after", cfg: Config{Deadline: 5 * time.Second}, call: 0, steps: []step{
			{3, "due", "probe deadline"},
			// the shim and the server stopped from 4 s to 19 s
			{19, "resumed", ""},
			{19, "unanswered", ""},
			{19, "due", "none"},
			{21.9, "due", "none"},
			{22, "due", "probe deadline"},
			{31.9, "unanswered", ""},
			{31.9, "due", "none"},
			{32, "due", "kill deadline"},
		}},
		{name: "a gap in the shim's ticks is no silence: --kill-on-cancel", cfg: Config{KillOnCancel: true}, call: 0, steps: []step{
			{1, "cancel", ""},
			{1, "nocall", ""},
			{1, "due", "probe cancel"},
			// the ping's time-out fires as the shim resumes, before the tick
			{17, "unanswered", ""},
			{17, "resumed", ""},
			{17, "cancelled", "no"},
			{17, "due", "probe cancel"},
			{26.9, "due", "none"},
			{27, "unanswered", ""},
			{27, "cancelled", "since 1"},
			{27, "due", "kill cancel"},
		}},
		{name: "a gap in the shim's ticks is no silence: --ping-interval", cfg: Config{Idle: 30 * time.Second}, call: -1, steps: []step{
			{30, "due", "probe idle"},
			{45, "resumed", ""},
			{45, "unanswered", ""},
			{45, "due", "none"},
			{74.9, "due", "none"},
			{75, "due", "probe idle"},
			{85, "due", "kill idle"},
		}},
		{name: "cancel, and the ping answered: nothing more", call: 0, steps: []step{
			{1, "cancel", ""},
			{1, "nocall", ""},
			{1, "due", "probe cancel"},
			{1.2, "answered", ""},
			{30, "due", "none"},
		}},
		{name: "cancel of a call still computing: CPU is a sign of life", call: 0, steps: []step{
			{0.5, "cpu 0ms", ""},
			{1, "cancel", ""},
			{1, "due", "probe cancel"},
			{6, "cpu 4000ms", ""},
			{30, "due", "none"},
		}},
		{name: "a background thread's CPU is no sign of life", call: 0, steps: []step{
			{0, "cpu 0ms", ""},
			{2, "cpu 20ms", ""},
			{3, "due", "probe call"},
		}},
		{name: "CPU at a tenth of the wall time or more is", call: 0, steps: []step{
			{0, "cpu 0ms", ""},
			{2, "cpu 200ms", ""},
			{3, "due", "none"},
			{5, "due", "probe call"},
		}},
		{name: "a progress notification is a sign of life", call: 0, steps: []step{
			{2, "heard", ""},
			{4.9, "due", "none"},
			{5, "due", "probe call"},
		}},
		{name: "the user's deadline: silent for it and deaf to a ping", cfg: Config{Deadline: time.Minute}, call: 0, steps: []step{
			{3, "due", "probe deadline"},
			{13, "unanswered", ""},
			{59.9, "due", "none"},
			{60, "due", "kill deadline"},
		}},
		{name: "a short deadline probes at the deadline", cfg: Config{Deadline: time.Second, PingTimeout: 500 * time.Millisecond}, call: 0, steps: []step{
			{0.9, "due", "none"},
			{1, "due", "probe deadline"},
			{1.4, "due", "none"},
			{1.5, "due", "kill deadline"},
		}},
		{name: "the user's deadline spares a server that answers the ping", cfg: Config{Deadline: 5 * time.Second}, call: 0, steps: []step{
			{3, "due", "probe deadline"},
			{3.1, "answered", ""},
			{6.1, "due", "probe deadline"},
			{6.2, "answered", ""},
			{20, "due", "probe deadline"},
		}},
		{name: "no call: no probe by default", call: -1, steps: []step{
			{3, "due", "none"},
			{600, "due", "none"},
		}},
		{name: "idle checks the user asked for", cfg: Config{Idle: 30 * time.Second}, call: -1, steps: []step{
			{29, "due", "none"},
			{30, "due", "probe idle"},
			{30.1, "answered", ""},
			{59, "due", "none"},
			{60.1, "due", "probe idle"},
			{70, "due", "none"},
			{70.1, "due", "kill idle"},
		}},
		{name: "idle checks kill no call's silence", cfg: Config{Idle: 30 * time.Second}, call: 0, steps: []step{
			{3, "due", "probe call"},
			{13, "unanswered", ""},
			{100, "due", "none"},
		}},
		{name: "a new call after a long idle is timed from its send", call: 50, steps: []step{
			{52.9, "due", "none"},
			{53, "due", "probe call"},
		}},
		{name: "a server that ignores pings is pinged no more, and no cancel kills it", call: 0, steps: []step{
			{3, "due", "probe call"},
			{13, "unanswered", ""},
			{14, "answer 13.5", ""},
			{14, "call", ""},
			{20, "due", "none"},
			{20, "cancel", ""},
			{20, "due", "none"},
			{32.9, "cancelled", "no"},
			{33, "cancelled", "since 20"},
			{60, "due", "none"},
		}},
		{name: "a late answer to a call sent before the ping teaches nothing", call: 0, steps: []step{
			{3, "due", "probe call"},
			{13, "unanswered", ""},
			{20, "answer 0", ""},
			{20, "call", ""},
			{23, "due", "probe call"},
		}},
		{name: "a server that ignores pings: the user's deadline is silence alone", cfg: Config{Deadline: 30 * time.Second}, call: 0, steps: []step{
			{3, "due", "probe deadline"},
			{13, "unanswered", ""},
			{14, "answer 13.5", ""},
			{14, "call", ""},
			{43.9, "due", "none"},
			{44, "due", "kill deadline"},
		}},
		{name: "an answer ends the deafness", call: 0, steps: []step{
			{3, "due", "probe call"},
			{13, "unanswered", ""},
			{20, "heard", ""},
			{23, "due", "probe call"},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t0 := time.Unix(1_000_000, 0)
			at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
			d := New(c.cfg, t0)
			if d.cfg.PingTimeout != pt && c.cfg.PingTimeout == 0 || d.cfg.Look > look {
				t.Fatalf("defaults: %+v", d.cfg)
			}
			call := time.Time{}
			if c.call >= 0 {
				call = at(c.call)
			}
			for _, s := range c.steps {
				now := at(s.at)
				switch f := strings.Fields(s.what); f[0] {
				case "due":
					if got := describe(d.Due(now, call)); got != s.want {
						t.Fatalf("at %vs: Due = %q, want %q", s.at, got, s.want)
					}
				case "nocall":
					call = time.Time{}
				case "call":
					call = now
				case "heard":
					d.Heard(now)
				case "answer":
					// answer SENT: a request sent at SENT s answered
					sent, _ := strconv.ParseFloat(f[1], 64)
					d.AnsweredRequest(now, at(sent))
				case "answered":
					d.Answered(now)
				case "unanswered":
					d.Unanswered()
				case "cancel":
					d.Cancelled(now)
				case "resumed":
					d.Resumed(now)
				case "cancelled":
					// "cancelled no", "cancelled since S": CancelDeaf
					got := "no"
					if at, ok := d.CancelDeaf(now); ok {
						got = fmt.Sprintf("since %g", at.Sub(t0).Seconds())
					}
					if got != s.want {
						t.Fatalf("at %vs: CancelDeaf = %q, want %q", s.at, got, s.want)
					}
				case "cpu":
					v, err := time.ParseDuration(f[1])
					if err != nil {
						t.Fatal(err)
					}
					d.CPU(now, v)
				default:
					t.Fatalf("unknown step %q", s.what)
				}
			}
		})
	}
}

func describe(a Action) string {
	kind := map[Kind]string{None: "none", Probe: "probe", Kill: "kill"}[a.Kind]
	if a.Kind == None {
		return kind
	}
	return fmt.Sprintf("%s %s", kind, map[Why]string{ForCall: "call", ForCancel: "cancel", ForDeadline: "deadline", ForIdle: "idle"}[a.Why])
}

func TestQuiet(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	sec := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	d := New(Config{}, t0)
	call := sec(1)
	if _, ok := d.Quiet(sec(5), call); ok {
		t.Fatal("quiet before any ping")
	}
	d.Due(sec(4), call) // the ping at 4 s
	if _, ok := d.Quiet(sec(13.9), call); ok {
		t.Fatal("quiet before the ping timed out")
	}
	since, ok := d.Quiet(sec(14), call)
	if !ok || !since.Equal(call) {
		t.Fatalf("Quiet at 14 s = %v, %v; want since the call (1 s)", since.Sub(t0), ok)
	}
	if _, ok := d.Quiet(sec(14), time.Time{}); ok {
		t.Fatal("quiet with no call outstanding")
	}
	d.Heard(sec(15))
	if _, ok := d.Quiet(sec(40), call); ok {
		t.Fatal("quiet after a sign of life and no ping since")
	}
}

func TestStopped(t *testing.T) {
	d := New(Config{}, time.Unix(0, 0))
	for i, c := range []struct{ seen, kill bool }{
		{true, false}, {false, false}, {true, false}, {true, true}, {true, true}, {false, false},
	} {
		if got := d.Stopped(c.seen); got != c.kill {
			t.Fatalf("check %d (seen %v): kill %v, want %v", i, c.seen, got, c.kill)
		}
	}
	d.Stopped(true)
	d.Resumed(time.Unix(1, 0))
	if d.Stopped(true) {
		t.Fatal("a stop seen before a gap in the shim's ticks counted after it")
	}
	d.Up(time.Unix(1, 0))
	if d.Stopped(true) {
		t.Fatal("a stop seen on the last server counted for the new one")
	}
}
