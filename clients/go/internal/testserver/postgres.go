package testserver

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"testing"
	"time"
)

// postgresStopTimeout bounds how long the PostgreSQL helper may take to stop its cluster and exit
// once its stdin is closed, and again after SIGTERM.
const postgresStopTimeout = 30 * time.Second

// Postgres is a temporary PostgreSQL cluster with one database, run by
// `node --import tsx test/helpers/postgres-cli.ts`.
type Postgres struct {
	// URL is the database's postgres:// URL, for a config's "database.url".
	URL   string
	out   *output
	cmd   *exec.Cmd
	stdin io.WriteCloser
	// exited yields the helper's Wait result, then is closed.
	exited chan error
}

// StartPostgres starts a temporary PostgreSQL cluster (PostgreSQL's server programs must be
// installed; see the repository's README) and returns its database's URL. The cluster is stopped
// and removed when t finishes: after the servers started later in t, whose cleanups run first.
func StartPostgres(t testing.TB) *Postgres {
	t.Helper()
	p, err := startPostgres()
	if err != nil {
		t.Fatalf("testserver: %v", err)
	}
	t.Cleanup(func() {
		if err := p.stop(); err != nil {
			t.Errorf("testserver: %v", err)
		}
		if t.Failed() {
			t.Logf("testserver: PostgreSQL helper output:\n%s", p.out.String())
		}
	})
	return p
}

// startPostgres launches the helper as the leader of a new process group and waits for the line
// {"url": ..., "port": ...} it prints once the database exists.
func startPostgres() (*Postgres, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("node", "--import", "tsx", "test/helpers/postgres-cli.ts")
	cmd.Dir = root
	cmd.Env = childEnv()
	newProcessGroup(cmd)
	out := &output{}
	cmd.Stderr = out
	// The helper stops the cluster when its stdin closes, also when this process dies.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %q in %s: %w", cmd.String(), root, err)
	}
	p := &Postgres{out: out, cmd: cmd, stdin: stdin, exited: make(chan error, 1)}
	first := make(chan string, 1)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		scanner := bufio.NewScanner(stdout)
		sent := false
		for scanner.Scan() {
			line := scanner.Text()
			_, _ = fmt.Fprintln(out, line)
			if !sent {
				sent = true
				first <- line
			}
		}
		// Drain what the scanner could not split, so the helper never blocks on a full pipe.
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() {
		// os/exec closes stdout in Wait, so Wait runs only once stdout has been read to the end.
		<-readDone
		p.exited <- cmd.Wait()
		close(p.exited)
	}()
	select {
	case line := <-first:
		var ready struct {
			URL string `json:"url"`
		}
		if err := json.Unmarshal([]byte(line), &ready); err != nil || ready.URL == "" {
			_ = p.stop()
			return nil, fmt.Errorf("the PostgreSQL helper printed %q, not {\"url\": ...}; output:\n%s", line, out.String())
		}
		p.URL = ready.URL
		return p, nil
	case err := <-p.exited:
		return nil, fmt.Errorf("%q exited before printing its URL (%v); output:\n%s", cmd.String(), err, out.String())
	case <-time.After(readyTimeout):
		_ = p.stop()
		return nil, fmt.Errorf("%q printed no URL within %s; output:\n%s", cmd.String(), readyTimeout, out.String())
	}
}

// stop closes the helper's stdin, which makes it stop and remove the cluster and exit; a helper
// still running after postgresStopTimeout gets SIGTERM (which does the same), and then its process
// group SIGKILL. PostgreSQL runs in a process group of its own, which only the helper stops.
func (p *Postgres) stop() error {
	_ = p.stdin.Close()
	select {
	case <-p.exited:
		return nil
	case <-time.After(postgresStopTimeout):
	}
	_ = p.cmd.Process.Signal(terminateSignal)
	select {
	case <-p.exited:
		return fmt.Errorf("the PostgreSQL helper stopped only on SIGTERM; output:\n%s", p.out.String())
	case <-time.After(postgresStopTimeout):
	}
	killProcessGroup(p.cmd.Process, p.exited)
	return fmt.Errorf("the PostgreSQL helper did not stop; killed it, its cluster may be left running; output:\n%s", p.out.String())
}
