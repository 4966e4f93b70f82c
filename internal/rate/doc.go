// Package rate is the rate limiter's vocabulary, the contract between the verification
// kernel, the fraud and spend steps that add limits to a send's policy, and the limiter
// that decides them in one call (internal/ratelimit): sliding-window rules and the keys
// they limit, the adaptive conversion guard and its settings, spend budgets and their
// fences, the decision with every rule's, guard's and budget's state, and the explanation
// of what the guard decided. It imports nothing of otpgate.
package rate
