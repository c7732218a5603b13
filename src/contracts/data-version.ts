/**
 * The data_version: what names a snapshot, its file and every answer made from it, and what a
 * read pins with data_version= or RI-Data-Version. The first 16 hex digits of the SHA-256 of the
 * snapshot file's bytes, lower case. A leaf (it imports nothing), so the snapshot layer that
 * makes the version and the doors that read it back write its form in one place.
 */
export type DataVersion = string;

/** How many hex digits of the file's SHA-256 a data_version keeps. */
export const DATA_VERSION_DIGITS = 16;

/** A data_version, whole. */
export const DATA_VERSION = new RegExp(`^[0-9a-f]{${DATA_VERSION_DIGITS}}$`);

/** The file a published snapshot is kept in: `<data_version>.sqlite`. */
export const SNAPSHOT_FILE = new RegExp(`^([0-9a-f]{${DATA_VERSION_DIGITS}})\\.sqlite$`);

/** The form, as refusals of a malformed version say it. */
export const DATA_VERSION_FORM = `${DATA_VERSION_DIGITS} lower-case hex digits`;

export function isDataVersion(value: unknown): value is DataVersion {
  return typeof value === 'string' && DATA_VERSION.test(value);
}
