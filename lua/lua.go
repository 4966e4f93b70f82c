// Package lua holds otpgate's Redis Lua scripts, embedded so that the packages running them
// can import them; each script starts with a comment documenting its KEYS, ARGV and reply.
package lua

import _ "embed"

// SlidingLog decides, records, reports and undoes requests against a policy's sliding-window
// logs, one sorted set per key, in one atomic call.
//
//go:embed sliding_log.lua
var SlidingLog string
