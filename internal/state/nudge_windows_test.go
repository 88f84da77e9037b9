package state

import (
	"errors"
	"os"
	"syscall"
	"testing"
	"time"
)

// The heal event: a nudge reaches the listening shim (each one, once), a
// second listener for the same process is refused (whoever made the event
// first could set it), a nudge after the listener stopped fails, and no
// other signal is sent.
func TestHealNudge(t *testing.T) {
	got := make(chan struct{}, 4)
	stop, err := ListenHeal(func() { got <- struct{}{} })
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := NudgeShim(os.Getpid(), syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		select {
		case <-got:
		case <-time.After(20 * time.Second):
			t.Fatalf("nudge %d never arrived", i+1)
		}
	}
	if _, err := ListenHeal(func() {}); err == nil {
		t.Error("a second listener for the same event was allowed")
	}
	if err := NudgeShim(os.Getpid(), syscall.SIGTERM); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("SIGTERM: %v, want ErrUnsupported", err)
	}
	stop()
	if err := NudgeShim(os.Getpid(), syscall.SIGHUP); err == nil {
		t.Error("a nudge with nobody listening succeeded")
	}
	select {
	case <-got:
		t.Error("a nudge arrived after stop")
	default:
	}
}
