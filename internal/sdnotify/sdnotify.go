// Package sdnotify tells systemd the state of a service started with
// Type=notify (sd_notify: READY, RELOADING, STOPPING, WATCHDOG) through
// coreos/go-systemd. Without NOTIFY_SOCKET, every call does nothing.
package sdnotify

import (
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"

	sddaemon "github.com/coreos/go-systemd/v22/daemon"
)

// Service sends one service's notifications.
type Service struct {
	log  *slog.Logger
	once sync.Once
	stop chan struct{}
}

// Ready tells systemd the service is ready (READY=1 with its status and
// pid), and starts the watchdog pings (WATCHDOG=1 at half WatchdogSec)
// when the unit asks for them. log receives failures to notify.
func Ready(status string, log *slog.Logger) *Service {
	if log == nil {
		log = slog.Default()
	}
	s := &Service{log: log}
	s.Notify("READY=1\nSTATUS=" + status + "\nMAINPID=" + strconv.Itoa(os.Getpid()))
	if iv, err := sddaemon.SdWatchdogEnabled(false); err == nil && iv > 0 {
		s.stop = make(chan struct{})
		go s.watchdog(iv / 2)
	}
	return s
}

// Notify sends state.
func (s *Service) Notify(state string) {
	if _, err := sddaemon.SdNotify(false, state); err != nil {
		s.log.Warn("cannot notify systemd", "state", state, "err", err)
	}
}

// Reloading tells systemd a reload has begun; Ready(...) or
// Notify("READY=1") follows when it is done.
func (s *Service) Reloading() {
	s.Notify("RELOADING=1\n" + sddaemon.SdNotifyMonotonicUsec())
}

// Stopping tells systemd the service is stopping and ends the watchdog
// pings; calls after the first do nothing.
func (s *Service) Stopping() {
	s.once.Do(func() {
		if s.stop != nil {
			close(s.stop)
		}
		s.Notify("STOPPING=1")
	})
}

func (s *Service) watchdog(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.Notify("WATCHDOG=1")
		}
	}
}
