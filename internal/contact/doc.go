// Package contact reads the addresses a code can go to and what follows from them: phone
// numbers in E.164 with their region and number type, email addresses in the one form they
// are stored and limited under, ISO 3166 regions and lists of them, and the message locales
// otpgate writes in, with the one a country's numbers get by default, and the browser
// origins an app lets call it. It imports nothing of otpgate, so the verification kernel
// and the features around it share its words.
package contact
