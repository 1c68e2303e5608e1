package testserver

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
)

// Certs are the PEM files of a throwaway PKI made for one test by the repository's
// test/helpers/certs-cli.ts (the same generator the TypeScript and Python tests use).
type Certs struct {
	// CA signs ServerCert and ClientCert.
	CA string `json:"ca"`
	// ServerCert is valid for localhost and 127.0.0.1; ServerKey is its key.
	ServerCert string `json:"serverCert"`
	ServerKey  string `json:"serverKey"`
	// ClientCert is a client certificate signed by CA; ClientKey is its key.
	ClientCert string `json:"clientCert"`
	ClientKey  string `json:"clientKey"`
	// OtherCA is unrelated to CA; OtherClientCert (key OtherClientKey) is signed by it.
	OtherCA         string `json:"otherCa"`
	OtherClientCert string `json:"otherClientCert"`
	OtherClientKey  string `json:"otherClientKey"`
}

// MakeCerts generates a fresh PKI in a temporary directory of t by running
// `node --import tsx test/helpers/certs-cli.ts DIR` in the repository root.
func MakeCerts(t testing.TB) Certs {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatalf("testserver: %v", err)
	}
	cmd := exec.Command("node", "--import", "tsx", "test/helpers/certs-cli.ts", t.TempDir())
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if exit, ok := err.(*exec.ExitError); ok {
			stderr = string(exit.Stderr)
		}
		t.Fatalf("testserver: making certificates: %v\n%s", err, stderr)
	}
	var certs Certs
	if err := json.Unmarshal(out, &certs); err != nil {
		t.Fatalf("testserver: reading the certificates' paths: %v (%q)", err, out)
	}
	return certs
}

// ClientTLS returns a client TLS configuration trusting the CA in caFile and, when certFile is not
// empty, presenting that certificate with the key in keyFile.
func ClientTLS(t testing.TB, caFile, certFile, keyFile string) *tls.Config {
	t.Helper()
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatalf("testserver: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("testserver: %s holds no PEM certificate", caFile)
	}
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if certFile != "" {
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			t.Fatalf("testserver: %v", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg
}
