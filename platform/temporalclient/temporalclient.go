// Package temporalclient dials the one Temporal client a process uses and
// sends the SDK's logs through logrus.
package temporalclient

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"

	"parley/workflows"
)

// Dial connects the process's one Temporal client and makes sure the
// namespace knows the search attributes job workflows are started with.
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
	if err := ensureSearchAttributes(ctx, c, namespace); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// ensureSearchAttributes registers the custom search attributes that are
// missing; registering is idempotent across processes (an attribute another
// process added meanwhile is no error).
func ensureSearchAttributes(ctx context.Context, c client.Client, namespace string) error {
	have, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("list search attributes: %w", err)
	}
	missing := map[string]enums.IndexedValueType{}
	for name, typ := range workflows.SearchAttributes() {
		if _, ok := have.CustomAttributes[name]; !ok {
			missing[name] = typ
		}
	}
	if len(missing) == 0 {
		return nil
	}
	_, err = c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace: namespace, SearchAttributes: missing,
	})
	var exists *serviceerror.AlreadyExists
	if err != nil && !errors.As(err, &exists) {
		return fmt.Errorf("add search attributes: %w", err)
	}
	return nil
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
