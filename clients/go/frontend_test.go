package parkway_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	pb "github.com/parkway-dev/parkway/clients/go/gen/parkway/v1"
)

// exampleDir is the example frontend, a module of its own that requires this one through a replace
// directive: building it proves the client installs from the repository path.
const exampleDir = "../../examples/go"

// exampleScript makes the example approve a Bash call, answer an AskUser question, and finish.
const exampleScript = `{"turns": [
	{"toolCalls": [{"id": "b1", "name": "Bash", "input": {"command": "touch approved.txt && echo ok"}}]},
	{"toolCalls": [{"id": "a1", "name": "AskUser", "input": {"questions": [{
		"question": "Which database should we use?", "header": "Database",
		"options": [{"label": "Postgres", "description": "Relational"}, {"label": "SQLite", "description": "Embedded"}]
	}]}}]},
	{"text": "Created approved.txt; using Postgres."}
]}`

// testExampleFrontend builds examples/go with `go build` and runs it against the server, with and
// without accepting the suggested rule; it prints what the TypeScript and Python examples print.
func testExampleFrontend(t *testing.T, env *testEnv) {
	bin := filepath.Join(t.TempDir(), "approve")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = exampleDir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build in %s: %v\n%s", exampleDir, err, out)
	}

	tests := []struct {
		name     string
		remember bool
		rules    string // the rules the approval line shows
	}{
		{name: "remember the suggested rule", remember: true, rules: "Bash(touch approved.txt:*)"},
		{name: "approve once", remember: false, rules: "none"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env.play(t, exampleScript)
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			args := []string{"-addr", env.server.Addr(), "-agent", "example"}
			if tc.remember {
				args = append(args, "-remember")
			}
			out, err := exec.CommandContext(ctx, bin, append(args, "set", "things", "up")...).CombinedOutput()
			output := string(out)
			if err != nil {
				t.Fatalf("the example failed: %v\n%s", err, output)
			}
			for _, want := range []string{
				`[approve] Bash {"command":"touch approved.txt && echo ok"} (rules: ` + tc.rules + ")\n",
				"[ask] Which database should we use? -> Postgres\n",
				"Created approved.txt; using Postgres.\n[final] Created approved.txt; using Postgres. (completed)\n",
			} {
				if !strings.Contains(output, want) {
					t.Errorf("the output lacks %q:\n%s", want, output)
				}
			}
			// The first line names the session; the command ran in the session's own directory, and
			// the suggested rule is stored only with -remember.
			first, _, _ := strings.Cut(output, "\n")
			sessionID, ok := strings.CutPrefix(first, "[session] ")
			if !ok {
				t.Fatalf("the first line %q does not name the session", first)
			}
			info, err := env.client.GetSession(ctx, sessionID)
			if err != nil {
				t.Fatalf("GetSession: %v", err)
			}
			if _, err := os.Stat(filepath.Join(info.GetWorkingDirectories()[0], "approved.txt")); err != nil {
				t.Errorf("the approved command did not run: %v", err)
			}
			rules, err := env.client.PermissionService().ListRules(ctx, &pb.ListRulesRequest{SessionId: sessionID})
			if err != nil {
				t.Fatalf("ListRules: %v", err)
			}
			accepted := slices.ContainsFunc(rules.GetRules(), func(r *pb.PermissionRule) bool {
				return r.GetSource() == pb.RuleSource_RULE_SOURCE_CONFIRMATION && r.GetToolName() == "Bash"
			})
			if accepted != tc.remember {
				t.Errorf("a Bash rule accepted in the confirmation: %t, want %t (rules: %v)", accepted, tc.remember, rules.GetRules())
			}
		})
	}
}
