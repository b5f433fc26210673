-- The generated key of a raster image's thumbnail blob (NULL when the file
-- has none: not a raster image, or one that could not be decoded).
ALTER TABLE sys_files ADD COLUMN thumb_key text NULL;
