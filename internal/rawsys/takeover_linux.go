package rawsys

import (
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// DupBlocking duplicates the descriptor behind c (close-on-exec) and
// sets the duplicate to blocking: the socket taken over from the net
// package, whose own descriptor the caller then closes, which takes the
// socket out of the runtime's poller.
func DupBlocking(c syscall.Conn) (int, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	var derr error
	if err := rc.Control(func(s uintptr) { fd, derr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return -1, err
	}
	if derr != nil {
		return -1, derr
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// NewEpollFile makes an epoll instance the runtime polls: a socket taken
// over with DupBlocking is added to its set while a goroutine waits for
// it through the returned RawConn's Read, which parks the goroutine with
// no thread and honours the file's read deadline. Its Control keeps the
// instance open while the callback runs.
func NewEpollFile(name string) (*os.File, syscall.RawConn, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, nil, err
	}
	if err := unix.SetNonblock(epfd, true); err != nil {
		unix.Close(epfd)
		return nil, nil, err
	}
	f := os.NewFile(uintptr(epfd), name)
	rc, err := f.SyscallConn()
	if err == nil {
		// Only a file the runtime polls can be waited on without a
		// thread: a deadline is refused otherwise.
		err = f.SetReadDeadline(time.Time{})
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, rc, nil
}
