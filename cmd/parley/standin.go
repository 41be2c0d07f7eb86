package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/sirupsen/logrus"
	"golang.org/x/sync/errgroup"
)

// serveStandIn serves a local stand-in of a paid provider (named by what,
// listening on addr from the setting variable) until ctx ends. Stand-ins
// accept one fixed account and are meant for development, so they listen
// on a loopback address only.
func serveStandIn(ctx context.Context, log *logrus.Logger, what, variable, addr string, h http.Handler) error {
	if err := requireLoopback(variable, addr); err != nil {
		return err
	}
	httpServer := &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 10 * time.Second}
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		log.WithField("addr", addr).Info(what + " listening")
		if err := httpServer.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	g.Go(func() error {
		<-ctx.Done()
		shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		return httpServer.Shutdown(shutdownCtx)
	})
	return g.Wait()
}

// requireLoopback refuses an address beyond this machine.
func requireLoopback(variable, addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s: %w", variable, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%s %q: the stand-in listens on a loopback address only", variable, addr)
}
