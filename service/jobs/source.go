package jobs

import (
	"context"

	"parley/model"
)

// SourceMedia is the media one of an account's jobs was made from (an
// upload, or what a URL job downloaded), for a player beside its
// transcript; model.ErrNotFound when the job is not the account's or has
// no media yet.
func (s *Service) SourceMedia(ctx context.Context, accountID, kind string, id int64) (Media, error) {
	j, err := s.d.Jobs.GetOwned(ctx, accountID, kind, id)
	if err != nil {
		return Media{}, err
	}
	if j.MediaKey == nil {
		return Media{}, model.ErrNotFound
	}
	info, err := s.d.Objects.Stat(ctx, *j.MediaKey)
	if err != nil {
		return Media{}, err
	}
	return Media{Key: *j.MediaKey, Size: info.Size, ETag: info.ETag}, nil
}
