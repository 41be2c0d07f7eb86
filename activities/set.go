package activities

// Set are the activity structs a worker serves. SMS is nil when no carrier
// is configured.
type Set struct {
	Jobs      *Jobs
	Media     *Media
	Speech    *Speech
	Subtitles *Subtitles
	Events    *Events
	Notify    *Notify
	SMS       *SMS
	Voice     *Voice
	// Uploads removes orphaned uploads (the upload-sweep schedule).
	Uploads *Uploads
}
