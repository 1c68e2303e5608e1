package parkway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	parkway "github.com/parkway-dev/parkway/clients/go"
	pb "github.com/parkway-dev/parkway/clients/go/gen/parkway/v1"
	"github.com/parkway-dev/parkway/clients/go/internal/testserver"
)

// The Go snippets of README.md run as written against `npm start` with no model configured (the
// built-in demo model), each built in a module of its own that requires this one through a replace
// directive. They are read from the Markdown when the test runs. The only thing filled in is what a
// snippet leaves to the reader: the server's address, written as readmeAddress (where `npm start`
// serves), becomes the test server's. A fenced block that is not meant to run carries
// `<!-- not run: why -->` on the line before it; a block in a language the test neither runs nor
// knows to be something other than a program fails the test, so none is passed over silently.

// readmeAddress is the address the snippets connect to.
const readmeAddress = "127.0.0.1:50051"

// readmeNotPrograms are fence languages that are not programs (commands, configuration, output).
var readmeNotPrograms = map[string]bool{"sh": true, "json": true, "text": true}

var (
	readmeFence  = regexp.MustCompile("^(\\s*)(`{3,}|~{3,})\\s*([^\\s`]*)")
	readmeMarker = regexp.MustCompile(`^\s*<!--\s*not run:\s*(.*?)\s*-->\s*$`)
)

// readmeSnippet is a fenced code block of a Markdown file.
type readmeSnippet struct {
	line   int // 1-based line of the opening fence
	lang   string
	code   string
	notRun string // the reason a `<!-- not run: … -->` marker gives, or ""
	marked bool
}

// readmeSnippets returns the fenced code blocks of markdown, with the markers before them.
func readmeSnippets(markdown string) []readmeSnippet {
	lines := strings.Split(markdown, "\n")
	var found []readmeSnippet
	for i := 0; i < len(lines); i++ {
		open := readmeFence.FindStringSubmatch(lines[i])
		if open == nil {
			continue
		}
		indent, fence, lang := open[1], open[2], open[3]
		var body []string
		j := i + 1
		for ; j < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[j]), fence); j++ {
			body = append(body, strings.TrimPrefix(lines[j], indent))
		}
		s := readmeSnippet{line: i + 1, lang: lang, code: strings.Join(body, "\n") + "\n"}
		k := i - 1
		for k >= 0 && strings.TrimSpace(lines[k]) == "" {
			k--
		}
		if k >= 0 {
			if m := readmeMarker.FindStringSubmatch(lines[k]); m != nil {
				s.notRun, s.marked = m[1], true
			}
		}
		found = append(found, s)
		i = j
	}
	return found
}

// demoConclusion is what the demo model says last when its reply concludes after the write ran.
func demoConclusion(t *testing.T, root string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "src", "model", "scripted", "demo-script.json"))
	if err != nil {
		t.Fatal(err)
	}
	var script struct {
		Turns []struct {
			Match map[string]any `json:"match"`
			Text  string         `json:"text"`
		} `json:"turns"`
	}
	if err := json.Unmarshal(data, &script); err != nil {
		t.Fatal(err)
	}
	for _, turn := range script.Turns {
		if _, denied := turn.Match["lastToolResult"]; turn.Match["toolName"] == "Write" && !denied {
			return turn.Text
		}
	}
	t.Fatal("the demo script has no concluding turn after Write")
	return ""
}

func TestREADMESnippets(t *testing.T) {
	root, err := testserver.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	markdown, err := os.ReadFile(filepath.Join(root, "clients", "go", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var runnable []readmeSnippet
	for _, s := range readmeSnippets(string(markdown)) {
		switch {
		case s.marked:
			t.Logf("README.md:%d not run: %s", s.line, s.notRun)
		case s.lang == "go":
			runnable = append(runnable, s)
		case !readmeNotPrograms[s.lang]:
			t.Errorf("README.md:%d: ```%s is neither run nor marked <!-- not run: … -->", s.line, s.lang)
		}
	}
	if len(runnable) == 0 || !strings.Contains(runnable[0].code, "parkway.NewClient") {
		t.Fatalf("the README's first Go snippet, the whole flow, is not among those run")
	}

	addr := testserver.Start(t)
	client, err := parkway.NewClient(addr, parkway.WithTimeout(rpcTimeout))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	conclusion := demoConclusion(t, root)

	for _, s := range runnable {
		t.Run(fmt.Sprintf("README.md:%d", s.line), func(t *testing.T) {
			if !strings.Contains(s.code, readmeAddress) {
				t.Fatalf("the snippet does not name the server's address %s", readmeAddress)
			}
			// A module of its own that requires this one, replaced by this directory, as a reader's
			// program would.
			dir := t.TempDir()
			here, err := os.Getwd()
			if err != nil {
				t.Fatal(err)
			}
			goMod := "module readmesnippet\n\ngo 1.26.0\n\nrequire github.com/parkway-dev/parkway/clients/go v0.0.0\n\n" +
				"replace github.com/parkway-dev/parkway/clients/go => " + here + "\n"
			sum, err := os.ReadFile("go.sum")
			if err != nil {
				t.Fatal(err)
			}
			for name, data := range map[string][]byte{
				"go.mod":  []byte(goMod),
				"go.sum":  sum,
				"main.go": []byte(strings.ReplaceAll(s.code, readmeAddress, addr)),
			} {
				if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}

			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			before := map[string]bool{}
			for info, err := range client.Sessions(ctx, pb.SessionStatus_SESSION_STATUS_UNSPECIFIED, "") {
				if err != nil {
					t.Fatal(err)
				}
				before[info.GetId()] = true
			}
			// Built first and then run, so that a snippet that does not finish is itself killed at
			// the deadline (`go run` would leave it running).
			bin := filepath.Join(dir, "snippet")
			build := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
			build.Dir = dir
			build.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("go build: %v\n%s", err, out)
			}
			run, cancelRun := context.WithTimeout(ctx, 45*time.Second)
			defer cancelRun()
			cmd := exec.CommandContext(run, bin)
			cmd.Dir = dir
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("the snippet: %v\n%s%s", err, stdout.String(), stderr.String())
			}

			// The snippet's session: its reply parked three times (the command, the question, the
			// write), each was answered, and it ended completed; both files were made.
			var created []*pb.Session
			for info, err := range client.Sessions(ctx, pb.SessionStatus_SESSION_STATUS_UNSPECIFIED, "") {
				if err != nil {
					t.Fatal(err)
				}
				if !before[info.GetId()] {
					created = append(created, info)
				}
			}
			if len(created) != 1 {
				t.Fatalf("the snippet made %d sessions, want 1", len(created))
			}
			info, err := client.GetSession(ctx, created[0].GetId())
			if err != nil {
				t.Fatal(err)
			}
			sess, err := client.Attach(ctx, info.GetId())
			if err != nil {
				t.Fatal(err)
			}
			defer sess.Close()
			var events []*parkway.Event
			for len(events) == 0 || events[len(events)-1].GetSeq() != info.GetLastSeq() {
				next, cancelNext := context.WithTimeout(ctx, 10*time.Second)
				ev, err := sess.Next(next)
				cancelNext()
				if err != nil {
					t.Fatalf("replaying the session after %d events: %v", len(events), err)
				}
				events = append(events, ev)
			}
			parked := 0
			for _, ev := range events {
				if ev.Kind() == parkway.KindReplyParked {
					parked++
				}
			}
			if parked != 3 {
				t.Errorf("the reply parked %d times, want 3", parked)
			}
			last := events[len(events)-1]
			if last.Kind() != parkway.KindReplyEnd || last.GetReplyEnd().GetFinishedReason() != pb.FinishedReason_FINISHED_REASON_COMPLETED {
				t.Errorf("the last event is %s %v, want reply_end FINISHED_REASON_COMPLETED", last.Kind(), last.GetReplyEnd().GetFinishedReason())
			}
			for _, name := range []string{"hello-parkway.txt", "hello-parkway.md"} {
				if _, err := os.Stat(filepath.Join(info.GetWorkingDirectories()[0], name)); err != nil {
					t.Errorf("the demo's file: %v", err)
				}
			}
			// What it printed ends with the demo's concluding text.
			if out := strings.TrimRight(stdout.String(), "\n"); !strings.HasSuffix(out, conclusion) {
				t.Errorf("the output does not end with the demo's conclusion:\n%s", out)
			}
		})
	}
}
