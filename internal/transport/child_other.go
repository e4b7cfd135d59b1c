//go:build !linux

package transport

import (
	"os"
	"os/exec"
	"syscall"
)

// setProcGroup does nothing here: process groups are handled on Linux only.
func setProcGroup(cmd *exec.Cmd) {}

// signalChild signals the child alone; SIGKILL uses Process.Kill, which
// works everywhere.
func signalChild(p *os.Process, sig syscall.Signal) error {
	if sig == syscall.SIGKILL {
		return p.Kill()
	}
	return p.Signal(sig)
}

// exitStatus describes how a process ended, as os.ProcessState says it.
func exitStatus(ps *os.ProcessState) string { return ps.String() }
