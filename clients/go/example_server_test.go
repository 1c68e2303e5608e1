package parkway_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/parkway-dev/parkway/clients/go/internal/testserver"
)

// examples is what the Example functions talk to: a scripted model and a Parkway server whose one
// agent, "assistant", uses it (and may run the client's tool "Lookup" without asking). The first
// Example that needs them starts them; TestMain stops them once every test and Example has run.
var examples struct {
	once   sync.Once
	model  *testserver.MockModel
	server *testserver.Server
	err    error
	stops  []func()
}

func TestMain(m *testing.M) {
	m.Run()
	for _, stop := range slices.Backward(examples.stops) {
		stop()
	}
}

func startExamples() {
	workdir, err := os.MkdirTemp("", "parkway-examples-")
	if err != nil {
		examples.err = err
		return
	}
	examples.stops = append(examples.stops, func() { _ = os.RemoveAll(workdir) })
	model, stop, err := testserver.LaunchMockModel()
	if err != nil {
		examples.err = err
		return
	}
	examples.stops = append(examples.stops, stop)
	server, stop, err := testserver.LaunchServer(testserver.ServerOptions{
		ModelURL: model.URL,
		Agents: []map[string]any{{
			"id":                 "assistant",
			"workingDirectories": []string{workdir},
			"permissions":        map[string]any{"allow": []string{"Lookup"}},
		}},
	})
	if err != nil {
		examples.err = err
		return
	}
	examples.stops = append(examples.stops, stop)
	examples.model, examples.server = model, server
}

// exampleServer returns the address of the Examples' Parkway server, its model set to play script
// (turns as in test/scenarios/README.md). When either cannot be started or the script loaded, it
// prints why, which fails the Example.
func exampleServer(script string) string {
	examples.once.Do(startExamples)
	err := examples.err
	if err == nil {
		err = examples.model.Reset(context.Background(), []byte(script))
	}
	if err != nil {
		fmt.Println("the example server:", err)
		return ""
	}
	return examples.server.Addr()
}

// restartExampleServer stops the Examples' server and starts it again on the same address and data,
// as an operator's restart would. When that fails, it prints why, which fails the Example.
func restartExampleServer() {
	if examples.server == nil {
		return // exampleServer said why
	}
	if err := examples.server.Restart(true); err != nil {
		fmt.Println("restarting the example server:", err)
	}
}
