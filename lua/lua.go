// Package lua holds otpgate's Redis Lua scripts, embedded so that the packages running them
// can import them; each script starts with a comment documenting its KEYS, ARGV and reply.
package lua

import _ "embed"

// SlidingLog decides, records, reports and undoes requests against a policy's sliding-window
// logs, one sorted set per key, and the fraud guard's counters and blocks, in one atomic call.
//
//go:embed sliding_log.lua
var SlidingLog string

// IdempotencyComplete stores an Idempotency-Key's response while the caller still holds its lock.
//
//go:embed idempotency_complete.lua
var IdempotencyComplete string

// IdempotencyRelease deletes an Idempotency-Key's record while the caller still holds its lock.
//
//go:embed idempotency_release.lua
var IdempotencyRelease string

// Guard counts approvals for the fraud guard and lifts its blocks, on the hashes SlidingLog keeps.
//
//go:embed guard.lua
var Guard string
