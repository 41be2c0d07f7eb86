package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// cluster is a running `make cluster`: its env file, its processes (driven
// through scripts/cluster.sh, the one place that knows how to start and
// stop them) and bin/parley for operator commands.
type cluster struct {
	root string // the repository
	dir  string // .cluster
	env  map[string]string
}

func openCluster(root, dir string) (*cluster, error) {
	c := &cluster{root: root, dir: dir}
	return c, c.reloadEnv()
}

// reloadEnv reads dir/env: `export NAME=VALUE` lines, values optionally
// single-quoted as scripts/cluster.sh writes them.
func (c *cluster) reloadEnv() error {
	f, err := os.Open(filepath.Join(c.dir, "env"))
	if err != nil {
		return fmt.Errorf("%w (is the cluster up? make cluster)", err)
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "export ")
		if !ok {
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		if len(value) >= 2 && value[0] == '\'' && value[len(value)-1] == '\'' {
			value = strings.ReplaceAll(value[1:len(value)-1], `'\''`, `'`)
		}
		env[name] = value
	}
	c.env = env
	return sc.Err()
}

func (c *cluster) environ() []string {
	out := os.Environ()
	for k, v := range c.env {
		out = append(out, k+"="+v)
	}
	return out
}

// ctl runs scripts/cluster.sh ARGS (start, stop, kill, restart NAME).
func (c *cluster) ctl(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(c.root, "scripts", "cluster.sh"), args...)
	cmd.Env = append(os.Environ(), "PARLEY_CLUSTER_DIR="+c.dir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("cluster.sh %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return nil
}

// parley runs bin/parley ARGS with the cluster's environment and returns
// its standard output.
func (c *cluster) parley(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(c.root, "bin", "parley"), args...)
	cmd.Env = c.environ()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("parley %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// adminJSON runs a `parley admin` command and decodes its JSON object.
func (c *cluster) adminJSON(ctx context.Context, args ...string) (map[string]any, error) {
	out, err := c.parley(ctx, append([]string{"admin"}, args...)...)
	if err != nil {
		return nil, err
	}
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		return nil, fmt.Errorf("parley admin %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return v, nil
}

// pidOf reads the pid scripts/cluster.sh recorded for NAME (0 when none).
func (c *cluster) pidOf(name string) int {
	b, err := os.ReadFile(filepath.Join(c.dir, "run", name+".pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// workerByIdentity maps a Temporal worker identity ("pid@host@...") to the
// cluster's worker process that has that pid.
func (c *cluster) workerByIdentity(identity string) string {
	pid, err := strconv.Atoi(strings.SplitN(identity, "@", 2)[0])
	if err != nil {
		return ""
	}
	for _, name := range []string{"worker1", "worker2"} {
		if c.pidOf(name) == pid {
			return name
		}
	}
	return ""
}

// waitFor polls check every interval until it reports done, or ctx ends.
func waitFor(ctx context.Context, interval time.Duration, check func() (bool, error)) error {
	for {
		done, err := check()
		if err != nil {
			return err
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}
