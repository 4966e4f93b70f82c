// Package inproc holds the end-to-end tests of otpgate's features over a production-mode
// server started in-process by servertest (real Redis and PostgreSQL, fake providers and
// webhook receivers), and the HTTP benchmarks of the send path. The package has no code of
// its own.
package inproc
