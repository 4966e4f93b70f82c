// Package fuzz holds the API fuzzer: a state-machine test that sends random sequences of
// public and admin requests to a server started in-process by servertest and checks every
// exchange against the OpenAPI documents and the limiter's state. The package has no code
// of its own.
package fuzz
