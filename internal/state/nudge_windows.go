package state

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/windows"

	"github.com/mcp-heal/mcp-heal/internal/procinfo"
)

// Windows has no SIGHUP: a shim waits on a named event instead, and heal
// (and the hooks) set it after SignalShim verified the record, exactly
// where unix sends SIGHUP. The name holds the shim's pid and start time, so
// it names one process for the life of the machine, like the record
// check; it lives in the session's Local\ namespace, and the event's
// default security (the creator's token) lets only this user and the
// system open it.

// healEventName is the event a shim with pid and start key waits on.
func healEventName(pid int, startKey string) string {
	return `Local\mcp-heal-heal-` + strconv.Itoa(pid) + "-" + startKey
}

// ListenHeal calls heal each time NudgeShim nudges this process, until
// stop is called.
func ListenHeal(heal func()) (stop func(), err error) {
	id, err := self()
	if err != nil {
		return nil, fmt.Errorf("heal nudges: %w", err)
	}
	name, err := windows.UTF16PtrFromString(healEventName(os.Getpid(), id.StartKey))
	if err != nil {
		return nil, err
	}
	ev, err := windows.CreateEvent(nil, 0, 0, name)
	if errors.Is(err, windows.ERROR_ALREADY_EXISTS) {
		// Someone made it first: whoever holds it could set it, so it is
		// not ours to wait on.
		windows.CloseHandle(ev)
		return nil, errors.New("heal nudges: the event already exists")
	}
	if err != nil {
		return nil, fmt.Errorf("heal nudges: %w", err)
	}
	quit, err := windows.CreateEvent(nil, 1, 0, nil)
	if err != nil {
		windows.CloseHandle(ev)
		return nil, fmt.Errorf("heal nudges: %w", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			i, err := windows.WaitForMultipleObjects([]windows.Handle{ev, quit}, false, windows.INFINITE)
			if err != nil || i != windows.WAIT_OBJECT_0 {
				return
			}
			heal()
		}
	}()
	return func() {
		windows.SetEvent(quit)
		<-done
		windows.CloseHandle(ev)
		windows.CloseHandle(quit)
	}, nil
}

// NudgeShim is SignalShim's sender on Windows, and the hooks' and
// doctor's: SIGHUP sets the heal event of the shim with pid (which
// SignalShim has just verified against its record); any other signal is
// ErrUnsupported, so a hook does not stop an unwrapped server's tree on
// Windows.
func NudgeShim(pid int, sig syscall.Signal) error {
	if sig != syscall.SIGHUP {
		return errors.ErrUnsupported
	}
	i, err := procinfo.Get(pid)
	if err != nil {
		return err
	}
	name, err := windows.UTF16PtrFromString(healEventName(pid, i.StartKey))
	if err != nil {
		return err
	}
	ev, err := windows.OpenEvent(windows.EVENT_MODIFY_STATE, false, name)
	if err != nil {
		return fmt.Errorf("shim %d does not listen for heal nudges: %w", pid, err)
	}
	defer windows.CloseHandle(ev)
	return windows.SetEvent(ev)
}
