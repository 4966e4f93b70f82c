package rate

// ScopeRateLimit is the scope of an app's rate limits that the caller keys by a value of
// its own (a user id, a session): Twilio's Service Rate Limits.
const ScopeRateLimit = "rate_limit"

// KeyedLimit is one of an app's rate limits, with the value a send keys it by: its rules
// (Twilio's buckets) limit the sends of the app that name that value.
type KeyedLimit struct {
	// ID names the rate limit; Name is its unique name, which the caller used.
	ID, Name string
	Value    string
	Rules    []Rule
}
