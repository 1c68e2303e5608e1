// Package parkway is the Go client for Parkway, a gRPC server that hosts tool-using LLM agents with
// people in the loop. The generated messages and service stubs for the parkway.v1 contract live in
// github.com/parkway-dev/parkway/clients/go/gen/parkway/v1.
package parkway
