package server

// The phases the background loops stop in, in this order. The loops start once the
// listeners serve and stop once the listeners have closed and the requests they accepted
// have finished (or OTP_SHUTDOWN_TIMEOUT ran out), since requests feed most of them: the
// pools close only after the last phase.
const (
	// phaseUses: the apps registry. Requests note the keys they use; its last act writes
	// those uses.
	phaseUses phase = iota
	// phaseDenied: the writer of refused sends. Requests queue them; the end of its context
	// makes it write what is queued, so it needs no flush.
	phaseDenied
	// phaseWrites: the outcome writer flushes the outcomes the requests queued while it still
	// runs, then stops along with the jobs that write on their own schedule: the sweeper,
	// the re-sealing of stored addresses, history retention and the event expirer.
	phaseWrites
	// phaseEvents: the event dispatcher, after every writer, so that the events of the rows
	// written at shutdown get their first attempt; it lets the deliveries in flight finish.
	phaseEvents
	// phaseLast: the fraud and spend reloaders, with their subscriptions to change
	// notifications, and the token signing keys' rotation. They write nothing a request
	// waits for and keep their snapshots current for as long as anything else runs.
	phaseLast
)

// loops is the table of the server's background loops, in the order they start; each stops
// in its phase. A part this setup lacks is nil: its loop is off, and the method values
// taken from it are never called. Backoff and the metrics of how far behind a loop is stay
// the loop's own (newServices registers the metrics).
func (s *services) loops(p *parts) []loop {
	return []loop{
		{name: "event dispatcher", run: s.events.dispatcher.Run, stop: phaseEvents},
		{name: "event expirer", run: s.events.expirer.Run, stop: phaseWrites},
		{name: "outcome writer", run: p.outcomes.Run, flush: p.outcomes.Close, stop: phaseWrites, off: p.outcomes == nil},
		{name: "sweeper", run: p.sweeper.Run, stop: phaseWrites, off: p.sweeper == nil},
		{name: "data key re-sealing", run: p.resealer.Run, stop: phaseWrites, off: p.resealer == nil},
		{name: "history retention", run: s.retention.Run, stop: phaseWrites, off: s.retention == nil},
		{name: "apps registry", run: s.registry.Run, stop: phaseUses},
		{name: "history writer", run: p.batch.Run, stop: phaseDenied, off: p.batch == nil},
		{name: "fraud reloader", run: s.fraud.reloader.Run, stop: phaseLast},
		{name: "spend reloader", run: s.spend.reloader.Run, stop: phaseLast},
		{name: "token keys", run: s.tokenKeys.Run, stop: phaseLast},
	}
}
