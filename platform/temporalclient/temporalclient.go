// Package temporalclient dials the one Temporal client a process uses and
// sends the SDK's logs through logrus.
package temporalclient

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
)

// SearchAttributes are custom search attributes by name, with their types.
type SearchAttributes = map[string]enums.IndexedValueType

// Dial connects the process's one Temporal client and makes sure the
// namespace knows the search attributes workflows are started with
// (workflows.SearchAttributes, passed in: the platform does not import the
// domain).
func Dial(ctx context.Context, address, namespace string, attrs SearchAttributes, logger *logrus.Logger) (client.Client, error) {
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
	if err := ensureSearchAttributes(ctx, c, namespace, attrs); err != nil {
		c.Close()
		return nil, err
	}
	// Its own budget: a real server may take its namespace cache's refresh
	// interval (10 s by default) to use attributes added just now.
	waitCtx, cancelWait := context.WithTimeout(context.Background(), searchAttributesWait)
	defer cancelWait()
	if err := waitSearchAttributesUsable(waitCtx, c, namespace, attrs); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// searchAttributesWait bounds how long Dial waits for the namespace to use
// its search attributes.
const searchAttributesWait = 45 * time.Second

// waitSearchAttributesUsable returns once a visibility query that names
// every custom search attribute is accepted. Temporal's own server (unlike
// the dev server, which refreshes on every read) lists an attribute as soon
// as it is added but maps it for the namespace only when its namespace cache
// next refreshes; until then starting a workflow or creating a schedule with
// it fails with "no mapping defined for search attribute". A query goes
// through the same mapping, so its success means starts will too.
func waitSearchAttributesUsable(ctx context.Context, c client.Client, namespace string, attrs SearchAttributes) error {
	var query []string
	for name, typ := range attrs {
		if typ == enums.INDEXED_VALUE_TYPE_INT {
			query = append(query, name+" = 0")
		} else {
			query = append(query, name+" = ''")
		}
	}
	sort.Strings(query)
	req := &workflowservice.CountWorkflowExecutionsRequest{Namespace: namespace, Query: strings.Join(query, " AND ")}
	for {
		_, err := c.WorkflowService().CountWorkflowExecutions(ctx, req)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("search attributes not usable on namespace %s: %w", namespace, err)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// ensureSearchAttributes registers the custom search attributes that are
// missing; registering is idempotent across processes (an attribute another
// process added meanwhile is no error).
func ensureSearchAttributes(ctx context.Context, c client.Client, namespace string, attrs SearchAttributes) error {
	have, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("list search attributes: %w", err)
	}
	missing := map[string]enums.IndexedValueType{}
	for name, typ := range attrs {
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
