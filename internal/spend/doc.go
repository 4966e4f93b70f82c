// Package spend prices every send and keeps it within the operator's budgets: a price table
// per channel, country and provider (shipped defaults, the operator's overrides), budgets per
// app and country over day and month windows, each fenced by the countries' own history so
// that an attack on one country spends its share and not everyone's. The send path asks it
// through otp.Spend for a quote whose budget windows the limiter reserves atomically with the
// other rules; the admin API changes its configuration, which every instance reloads.
package spend
