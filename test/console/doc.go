// Package console holds the admin console's browser tests: Chromium (through chromedp)
// drives the console of a server started in-process by servertest, and each test checks
// what an operator sees and does. The package has no code of its own.
package console
