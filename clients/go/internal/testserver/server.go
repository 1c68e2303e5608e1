package testserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// MockModel is a running `parkway mock-model`: an OpenAI-compatible HTTP server that plays a script.
type MockModel struct {
	// URL is the base URL ending in /v1, for the "model.url" of a Parkway config.
	URL  string
	out  *output
	proc *process
}

// StartMockModel launches `node bin/parkway.js mock-model` with an empty script on a free loopback
// port; load a script with Reset. The process group is stopped when t finishes.
func StartMockModel(t testing.TB) *MockModel {
	t.Helper()
	// Created before the stop cleanup is registered, so it is removed only after the model is gone.
	dir := t.TempDir()
	m, err := startMockModel(dir)
	if err != nil {
		t.Fatalf("testserver: %v", err)
	}
	t.Cleanup(func() {
		m.proc.stop()
		if t.Failed() {
			t.Logf("testserver: mock model output:\n%s", m.out.String())
		}
	})
	return m
}

// LaunchMockModel is StartMockModel for code without a testing.TB (TestMain, Example functions):
// stop ends the process group and removes the model's files.
func LaunchMockModel() (m *MockModel, stop func(), err error) {
	dir, err := os.MkdirTemp("", "parkway-mock-model-")
	if err != nil {
		return nil, nil, fmt.Errorf("testserver: %w", err)
	}
	m, err = startMockModel(dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, nil, fmt.Errorf("testserver: %w", err)
	}
	return m, func() { m.proc.stop(); _ = os.RemoveAll(dir) }, nil
}

// startMockModel launches the mock model with its script file in dir.
func startMockModel(dir string) (*MockModel, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	script := filepath.Join(dir, "script.json")
	if err := os.WriteFile(script, []byte(`{"turns": []}`), 0o600); err != nil {
		return nil, err
	}
	out := &output{}
	p, line, err := startProcess(root, out, "node", "bin/parkway.js", "mock-model", "--script", script, "--listen", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("mock model: %w; output:\n%s", err, out.String())
	}
	url, _ := line["url"].(string)
	if url == "" {
		p.stop()
		return nil, fmt.Errorf("the mock model's listening line has no url; output:\n%s", out.String())
	}
	return &MockModel{URL: url, out: out, proc: p}, nil
}

// control is the base of the scripted model's control endpoints (the URL without /v1).
func (m *MockModel) control(path string) string {
	return strings.TrimSuffix(m.URL, "/v1") + path
}

// Reset forgets the requests received so far and plays script (a JSON object {"turns": [...]}).
func (m *MockModel) Reset(ctx context.Context, script []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.control("/_scripted/reset"), bytes.NewReader(script))
	if err != nil {
		return err
	}
	req.Header.Set("content-type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("resetting the mock model: %s: %s", res.Status, body)
	}
	return nil
}

// Requests returns every chat completion request body received since the last Reset, in order, as
// the JSON the mock model serialised.
func (m *MockModel) Requests(ctx context.Context) ([]json.RawMessage, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.control("/_scripted/requests"), nil)
	if err != nil {
		return nil, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("listing the mock model's requests: %s: %s", res.Status, body)
	}
	var requests []json.RawMessage
	if err := json.Unmarshal(body, &requests); err != nil {
		return nil, fmt.Errorf("listing the mock model's requests: %w", err)
	}
	return requests, nil
}

// ServerOptions configures StartServer.
type ServerOptions struct {
	// ModelURL is the OpenAI-compatible endpoint every agent uses (a MockModel's URL).
	ModelURL string
	// Agents are the config's agents, as JSON objects ({"id": ..., "workingDirectories": [...], ...}).
	Agents []map[string]any
	// Config holds further top-level config keys (e.g. "tenants").
	Config map[string]any
}

// Server is a Parkway server launched with `npm start` on a config file and data directory of its
// own. It can be stopped, killed and started again on the same data directory; the process group is
// stopped when the test finishes.
type Server struct {
	root    string
	config  string
	dataDir string
	out     *output

	mu   sync.Mutex
	addr string
	proc *process
}

// StartServer writes a config file with opts' model and agents and launches Parkway on a free
// loopback port with a fresh data directory.
func StartServer(t testing.TB, opts ServerOptions) *Server {
	t.Helper()
	s, err := newServer(t.TempDir(), opts)
	if err != nil {
		t.Fatalf("testserver: %v", err)
	}
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			t.Logf("testserver: server output:\n%s", s.out.String())
		}
	})
	if err := s.Start(false); err != nil {
		t.Fatalf("testserver: %v", err)
	}
	return s
}

// LaunchServer is StartServer for code without a testing.TB (TestMain, Example functions): stop
// ends the server's process group and removes its config and data.
func LaunchServer(opts ServerOptions) (s *Server, stop func(), err error) {
	dir, err := os.MkdirTemp("", "parkway-server-")
	if err != nil {
		return nil, nil, fmt.Errorf("testserver: %w", err)
	}
	s, err = newServer(dir, opts)
	if err == nil {
		err = s.Start(false)
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, nil, fmt.Errorf("testserver: %w", err)
	}
	return s, func() { s.Stop(); _ = os.RemoveAll(dir) }, nil
}

// newServer writes the config file for opts into dir; the data directory goes there too.
func newServer(dir string, opts ServerOptions) (*Server, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	config := map[string]any{}
	for key, value := range opts.Config {
		config[key] = value
	}
	config["model"] = map[string]any{"url": opts.ModelURL, "name": "scripted", "maxRetries": 2}
	config["agents"] = opts.Agents
	data, err := json.MarshalIndent(config, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding the config: %w", err)
	}
	s := &Server{
		root:    root,
		config:  filepath.Join(dir, "parkway.json"),
		dataDir: filepath.Join(dir, "data"),
		out:     &output{},
	}
	if err := os.WriteFile(s.config, data, 0o600); err != nil {
		return nil, err
	}
	return s, nil
}

// Addr returns the address the server listens on (its latest run's, when it is down).
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// DataDir returns the server's data directory.
func (s *Server) DataDir() string { return s.dataDir }

// Output returns everything the server's runs wrote so far.
func (s *Server) Output() string { return s.out.String() }

// Start launches the server, on its previous address when sameAddr is set and there is one, else on
// a free port. It waits until the server logs "listening". It does nothing when the server runs.
func (s *Server) Start(sameAddr bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		return nil
	}
	listen := "127.0.0.1:0"
	if sameAddr && s.addr != "" {
		listen = s.addr
	}
	p, line, err := startProcess(s.root, s.out, "npm", "start", "--silent", "--",
		"--config", s.config, "--listen", listen, "--data", s.dataDir)
	if err != nil {
		return fmt.Errorf("%w; output:\n%s", err, s.out.String())
	}
	addr, _ := line["address"].(string)
	if addr == "" {
		p.stop()
		return fmt.Errorf("the listening line has no address; output:\n%s", s.out.String())
	}
	s.proc, s.addr = p, addr
	return nil
}

// Stop shuts the server down gracefully (SIGTERM, then SIGKILL after a grace period) and waits.
func (s *Server) Stop() {
	s.mu.Lock()
	p := s.proc
	s.proc = nil
	s.mu.Unlock()
	if p != nil {
		p.stop()
	}
}

// Kill kills the server with SIGKILL, as a crash would, and waits for it to be gone.
func (s *Server) Kill() {
	s.mu.Lock()
	p := s.proc
	s.proc = nil
	s.mu.Unlock()
	if p != nil {
		p.kill()
	}
}

// Restart stops the server gracefully and starts it again on the same data directory and config
// (on the same address when sameAddr is set).
func (s *Server) Restart(sameAddr bool) error {
	s.Stop()
	return s.Start(sameAddr)
}
