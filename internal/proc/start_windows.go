package proc

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/mcp-heal/mcp-heal/internal/guardian"
)

// On Windows the server's whole tree runs in a Job Object of the shim's
// with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE: the shim holds the only handle
// to it, so when the shim ends, however it ends (TerminateProcess, a
// crash, Claude Code's tree kill), the kernel closes the handle and kills
// every process in the job: the server, an npx wrapper's real server and
// whatever they started. That is the guarantee a guardian gives on unix,
// without a process of its own; the keeper (guardian, --keep) is unix-only.

// startChild starts the command at path in a job object of its own. g is
// always nil here and cfg.Guardian is not used: see above.
func startChild(cfg Config, path string, log *slog.Logger, _ *guardian.Guardian) (spawned, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return spawned{}, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return spawned{}, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return spawned{}, err
	}
	job, jobErr := newKillJob()
	if jobErr != nil {
		log.Warn("no job object: the server's descendants may outlive a killed shim", "err", jobErr)
	}
	cmd := exec.Command(path, cfg.Args...)
	cmd.Args[0] = cfg.Path
	cmd.Env = cfg.Env
	cmd.Dir = cfg.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	// Suspended, so that it starts nothing before it is in the job (a
	// child assigned after it ran could have started grandchildren
	// outside it). Its own process group: a Ctrl+C in Claude Code's
	// console does not reach it (the shim stops it, as on unix where it
	// has its own process group).
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_SUSPENDED | windows.CREATE_NEW_PROCESS_GROUP}
	err = cmd.Start()
	closeAll(inR, outW, errW)
	if err != nil {
		closeAll(inW, outR, errR)
		if job != 0 {
			windows.CloseHandle(job)
		}
		return spawned{}, fmt.Errorf("start %q: %w", cfg.Path, err)
	}
	pid := cmd.Process.Pid
	jc := &jobChild{cmd: cmd, job: job}
	// Opened while the child cannot have exited (it is suspended, and
	// cmd holds a handle to it): the pid is certainly the child's.
	jc.proc, err = windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err == nil && job != 0 {
		if err = windows.AssignProcessToJobObject(job, jc.proc); err != nil {
			log.Warn("no job object: the server's descendants may outlive a killed shim", "err", err)
			windows.CloseHandle(job)
			jc.job = 0
		}
	}
	if err == nil {
		err = resumeProcess(uint32(pid))
	}
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		jc.release()
		closeAll(inW, outR, errR)
		return spawned{}, fmt.Errorf("start %q: %w", cfg.Path, err)
	}
	return spawned{ch: jc, pid: pid, started: time.Now(), stdin: inW, stdout: outR, stderr: errR}, nil
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// newKillJob creates a job that kills its processes when its last handle
// is closed.
func newKillJob() (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, fmt.Errorf("create job object: %w", err)
	}
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation, uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return 0, fmt.Errorf("set job object limits: %w", err)
	}
	return job, nil
}

// resumeProcess resumes the threads of a process created suspended. os/exec
// closes the handle of the main thread that CreateProcess returns, so the
// thread is found in a Toolhelp snapshot (a process created suspended has
// that one thread).
func resumeProcess(pid uint32) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return fmt.Errorf("resume the server: %w", err)
	}
	defer windows.CloseHandle(snap)
	var e windows.ThreadEntry32
	e.Size = uint32(unsafe.Sizeof(e))
	resumed := 0
	for err = windows.Thread32First(snap, &e); err == nil; err = windows.Thread32Next(snap, &e) {
		if e.OwnerProcessID != pid {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, e.ThreadID)
		if err != nil {
			return fmt.Errorf("resume the server: %w", err)
		}
		_, err = windows.ResumeThread(th)
		windows.CloseHandle(th)
		if err != nil {
			return fmt.Errorf("resume the server: %w", err)
		}
		resumed++
	}
	if resumed == 0 {
		return errors.New("resume the server: it has no thread")
	}
	return nil
}

// jobChild is a child of ours in its job object (job is 0 when the job
// could not be made: then only the child itself can be killed).
type jobChild struct {
	cmd  *exec.Cmd
	job  windows.Handle
	proc windows.Handle
	// killed is set when we terminate the child before it exited: its
	// exit code is then ours (1), and it is reported as killed.
	killed atomic.Bool
	exited atomic.Bool
	// mu guards job and proc against release: a Kill that comes after it
	// must not terminate whatever object reuses the closed handle's value
	// (the next server's job).
	mu sync.Mutex
}

func (c *jobChild) wait() status {
	err := c.cmd.Wait()
	c.exited.Store(true)
	// Whatever the child left behind (an npx wrapper's server) goes with
	// it, as its process group does on unix.
	c.terminate()
	ps := c.cmd.ProcessState
	if ps == nil {
		return status{err: err}
	}
	if c.killed.Load() {
		return status{sig: syscall.SIGKILL}
	}
	code := uint32(ps.ExitCode())
	return status{exited: true, code: int(code), note: ntstatusNote(code)}
}

// signal: SIGKILL terminates the job (every process in it). Windows has no
// other signal for a process without a console of its own: the stop ladder
// goes from closing stdin straight to this.
func (c *jobChild) signal(sig syscall.Signal) error {
	if sig != syscall.SIGKILL {
		return errors.ErrUnsupported
	}
	if !c.exited.Load() {
		c.killed.Store(true)
	}
	return c.terminate()
}

func (c *jobChild) terminate() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.job != 0 {
		return windows.TerminateJobObject(c.job, 1)
	}
	if c.proc != 0 {
		return windows.TerminateProcess(c.proc, 1)
	}
	// Released, or no handle was opened: Kill is a no-op once the
	// process was waited for.
	return c.cmd.Process.Kill()
}

// release closes the job (killing whatever is still in it) and the
// process handle. Only after wait returned.
func (c *jobChild) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.job != 0 {
		windows.CloseHandle(c.job)
		c.job = 0
	}
	if c.proc != 0 {
		windows.CloseHandle(c.proc)
		c.proc = 0
	}
}

// ntstatus names the exception codes a crashed Windows process exits with
// (an NTSTATUS, where a unix process would die of a signal).
var ntstatus = map[uint32]string{
	0xC0000005: "an access violation",
	0xC000001D: "an illegal instruction",
	0xC0000094: "an integer division by zero",
	0xC00000FD: "a stack overflow",
	0xC0000409: "a fail-fast exit (stack buffer overrun or abort)",
	0xC0000017: "out of memory",
	0xC000013A: "Ctrl+C (its console was interrupted)",
	0xC0000135: "a DLL it needs was not found",
	0xC0000142: "a DLL failed to initialise",
}

// ntstatusNote says what a crash exit code means; "" for an ordinary code.
func ntstatusNote(code uint32) string {
	if code < 0xC0000000 {
		return ""
	}
	what := ntstatus[code]
	if what == "" {
		what = "an unhandled exception"
	}
	return fmt.Sprintf("0x%08X: it crashed with %s", code, what)
}

// StartUnder is Start on Windows, where there are no kept servers.
func StartUnder(cfg Config, _ *guardian.Guardian) (*Process, error) { return start(cfg, nil) }

// Adopt is never called on Windows (there are no kept servers).
func Adopt(cfg Config, _ *guardian.Child, _ []byte) *Process { return nil }
