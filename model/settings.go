package model

// Names of the platform's settings (the settings table).
const (
	// SettingPlatformConcurrentJobs caps the jobs in flight on the whole
	// platform.
	SettingPlatformConcurrentJobs = "platform_concurrent_jobs"
	// SettingDefaultConcurrentJobs caps an account's jobs in flight unless
	// the account has its own limit.
	SettingDefaultConcurrentJobs = "default_concurrent_jobs"
)
