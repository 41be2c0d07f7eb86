// Package temporalclient dials the one Temporal client a process uses and
// sends the SDK's logs through logrus.
package temporalclient

import (
	"context"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
)

// Dial connects the process's one Temporal client.
func Dial(ctx context.Context, address, namespace string, logger *logrus.Logger) (client.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	c, err := client.DialContext(ctx, client.Options{
		HostPort:  address,
		Namespace: namespace,
		Logger:    NewLogAdapter(logger.WithField("component", "temporal")),
	})
	if err != nil {
		return nil, fmt.Errorf("connect to temporal at %s: %w", address, err)
	}
	return c, nil
}

// LogAdapter sends the SDK's logs through logrus.
type LogAdapter struct{ entry *logrus.Entry }

// NewLogAdapter wraps a logrus entry.
func NewLogAdapter(e *logrus.Entry) *LogAdapter { return &LogAdapter{entry: e} }

var _ log.Logger = (*LogAdapter)(nil)

func (l *LogAdapter) fields(keyvals []any) *logrus.Entry {
	f := logrus.Fields{}
	for i := 0; i+1 < len(keyvals); i += 2 {
		f[fmt.Sprint(keyvals[i])] = keyvals[i+1]
	}
	if len(keyvals)%2 == 1 {
		f["extra"] = keyvals[len(keyvals)-1]
	}
	return l.entry.WithFields(f)
}

func (l *LogAdapter) Debug(msg string, keyvals ...any) { l.fields(keyvals).Debug(msg) }
func (l *LogAdapter) Info(msg string, keyvals ...any)  { l.fields(keyvals).Info(msg) }
func (l *LogAdapter) Warn(msg string, keyvals ...any)  { l.fields(keyvals).Warn(msg) }
func (l *LogAdapter) Error(msg string, keyvals ...any) { l.fields(keyvals).Error(msg) }

// With returns a logger with keyvals added to every line.
func (l *LogAdapter) With(keyvals ...any) log.Logger { return &LogAdapter{entry: l.fields(keyvals)} }
