package proxy

import (
	"os"
	"os/signal"
)

// NotifyRelease returns a channel for Options.Release that delivers each
// time the proxy's process gets SIGUSR1 (`kill -USR1 PID`: pass on what
// the rules hold), and the function that stops listening. Where there is
// no such signal the channel never delivers.
func NotifyRelease() (<-chan struct{}, func()) {
	out := make(chan struct{}, 1)
	if sigRelease == nil {
		return out, func() {}
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, sigRelease)
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-sigs:
				select {
				case out <- struct{}{}:
				default: // one release is pending already
				}
			case <-done:
				return
			}
		}
	}()
	return out, func() {
		signal.Stop(sigs)
		close(done)
		<-stopped
	}
}
