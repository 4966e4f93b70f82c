// Package conformance holds the tests that drive the server with other people's client
// libraries: Twilio's Go, Python and Node helper libraries against the Twilio Verify
// compatible API (and its OpenAPI schema), and the JWT libraries of several languages
// against the verification tokens. Each starts the server in-process through servertest.
// The package has no code of its own.
package conformance
