package testserver

import (
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
)

// ClusterLeaseTimeout is the nodes' database.leaseTimeout: short, so that a session a node stops
// serving moves soon, and long enough for a busy test machine's pauses.
const ClusterLeaseTimeout = "1s"

// Cluster is several Parkway nodes sharing one PostgreSQL database, each a [Server] with the same
// config plus "database": {"url", "leaseTimeout", "nodeId": "node-<i>"}.
type Cluster struct {
	// Nodes are the servers, node-0 first.
	Nodes []*Server
}

// StartCluster launches n nodes on databaseURL (see [StartPostgres]), each on a free loopback port
// with a config and data directory of its own, and waits until all of them listen. The nodes are
// stopped when t finishes.
func StartCluster(t testing.TB, opts ServerOptions, databaseURL string, n int) *Cluster {
	t.Helper()
	c := &Cluster{}
	for i := range n {
		nodeOpts := opts
		nodeOpts.Config = maps.Clone(opts.Config)
		if nodeOpts.Config == nil {
			nodeOpts.Config = map[string]any{}
		}
		nodeOpts.Config["database"] = map[string]any{
			"url":          databaseURL,
			"leaseTimeout": ClusterLeaseTimeout,
			"nodeId":       fmt.Sprintf("node-%d", i),
		}
		s, err := newServer(t.TempDir(), nodeOpts)
		if err != nil {
			t.Fatalf("testserver: node-%d: %v", i, err)
		}
		c.Nodes = append(c.Nodes, s)
	}
	t.Cleanup(func() {
		c.each(func(_ int, s *Server) error { s.Stop(); return nil })
		if t.Failed() {
			for i, s := range c.Nodes {
				t.Logf("testserver: node-%d output:\n%s", i, s.Output())
			}
		}
	})
	if err := c.each(func(_ int, s *Server) error { return s.Start(false) }); err != nil {
		t.Fatalf("testserver: %v", err)
	}
	return c
}

// Restart stops every node gracefully (SIGTERM), then starts each again on its address, its config
// and so its node id.
func (c *Cluster) Restart() error {
	c.each(func(_ int, s *Server) error { s.Stop(); return nil })
	return c.each(func(_ int, s *Server) error { return s.Start(true) })
}

// Crash kills every node's process group with SIGKILL, as a power cut would, then starts each again
// on its address, its config and so its node id.
func (c *Cluster) Crash() error {
	c.each(func(_ int, s *Server) error { s.Kill(); return nil })
	return c.each(func(_ int, s *Server) error { return s.Start(true) })
}

// each runs f for every node at once and waits; the error names the nodes that failed.
func (c *Cluster) each(f func(i int, s *Server) error) error {
	errs := make([]error, len(c.Nodes))
	var wg sync.WaitGroup
	for i, s := range c.Nodes {
		wg.Go(func() {
			if err := f(i, s); err != nil {
				errs[i] = fmt.Errorf("node-%d: %w", i, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
