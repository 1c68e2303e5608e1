package parkway_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// scenarioDirs hold the scenario files: first those shared by the TypeScript, Python and Go runners
// (see test/scenarios/README.md for the format), then Go-only ones that exercise the runner's
// reconnect and restart steps further.
var scenarioDirs = []string{"../../test/scenarios", "testdata/scenarios"}

// scenario is one file of test/scenarios.
type scenario struct {
	Name   string                     `json:"name"`
	Agent  map[string]json.RawMessage `json:"agent"`
	Files  map[string]string          `json:"files"`
	Script json.RawMessage            `json:"script"`
	Steps  []step                     `json:"steps"`
	Final  *struct {
		Status   string            `json:"status"`
		ModelSaw []string          `json:"model_saw"`
		Files    map[string]string `json:"files"`
		Rules    *int              `json:"rules"`
	} `json:"final"`
}

// step is one action and what must follow it.
type step struct {
	Send    *string `json:"send"`
	Confirm []struct {
		Call      string          `json:"call"`
		Confirmed bool            `json:"confirmed"`
		Rules     json.RawMessage `json:"rules"` // "suggested" or [{tool_name, rule_content?, scope?}]
		Reason    string          `json:"reason"`
		Input     json.RawMessage `json:"input"`
	} `json:"confirm"`
	Results []struct {
		Call     string          `json:"call"`
		Output   string          `json:"output"`
		State    string          `json:"state"`
		Metadata json.RawMessage `json:"metadata"`
		Answers  []struct {
			Question string   `json:"question"`
			Selected []string `json:"selected"`
			Other    *string  `json:"other"`
		} `json:"answers"`
	} `json:"results"`
	Interrupt  bool     `json:"interrupt"`
	Wait       bool     `json:"wait"`
	NewSession bool     `json:"new_session"`
	Reconnect  bool     `json:"reconnect"`
	Restart    bool     `json:"restart"`
	Crash      bool     `json:"crash"`
	Expect     []string `json:"expect"`
	Error      *struct {
		Code    string `json:"code"`
		Field   string `json:"field"`
		Message string `json:"message"`
	} `json:"error"`
}

// loadedScenario is a scenario file instantiated for its working directory.
type loadedScenario struct {
	stem    string
	workdir string
	sc      *scenario
	err     error // the file could not be read or parsed
}

// instantiate parses a scenario with $WORKDIR replaced by workdir and $REPO by the repository's
// root (JSON-escaped).
func instantiate(text, workdir string) (*scenario, error) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		return nil, err
	}
	for token, value := range map[string]string{"$WORKDIR": workdir, "$REPO": repo} {
		var escaped bytes.Buffer
		enc := json.NewEncoder(&escaped)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(value); err != nil {
			return nil, err
		}
		quoted := strings.TrimSpace(escaped.String())
		text = strings.ReplaceAll(text, token, quoted[1:len(quoted)-1])
	}
	var sc scenario
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sc); err != nil {
		return nil, err
	}
	return &sc, nil
}

// loadScenarios reads every scenario file, each instantiated for a working directory of its own
// under a fresh temporary directory, and returns them with the agents they need. A file that cannot
// be read fails its own subtest only.
func loadScenarios(t *testing.T) ([]loadedScenario, []map[string]any) {
	var files []string
	for _, dir := range scenarioDirs {
		found, err := filepath.Glob(filepath.Join(dir, "*.json"))
		if err != nil || len(found) == 0 {
			t.Fatalf("no scenario files in %s (%v)", dir, err)
		}
		sort.Strings(found)
		files = append(files, found...)
	}
	work := t.TempDir()
	var loaded []loadedScenario
	var agents []map[string]any
	seen := map[string]string{}
	for _, file := range files {
		stem := strings.TrimSuffix(filepath.Base(file), ".json")
		if other, dup := seen[stem]; dup {
			t.Fatalf("%s and %s would both be agent %q", other, file, stem)
		}
		seen[stem] = file
		ls := loadedScenario{stem: stem, workdir: filepath.Join(work, stem)}
		text, err := os.ReadFile(file)
		if err == nil {
			ls.sc, err = instantiate(string(text), ls.workdir)
		}
		if err == nil {
			err = os.MkdirAll(ls.workdir, 0o755)
		}
		if err != nil {
			ls.err = err
		} else {
			// Sessions share the agent's directory, where the scenario's files are.
			agent := map[string]any{
				"id":                      stem,
				"workingDirectories":      []string{ls.workdir},
				"shareWorkingDirectories": true,
			}
			for key, value := range ls.sc.Agent {
				agent[key] = value
			}
			agents = append(agents, agent)
		}
		loaded = append(loaded, ls)
	}
	return loaded, agents
}
