import { createReadStream, existsSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { ExportBytesSchema, ExportFileParams } from '../../../contracts/exports.js';
import { QUERIES } from '../../../contracts/queries.js';
import { ServiceError } from '../../../core/errors.js';
import { EXPORT_FORMATS } from '../../../core/exports.js';
import { exportsFolder, readExportManifest } from '../../../snapshot/exports.js';
import { snapshotFile } from '../../../snapshot/folder.js';
import { byteRange } from '../../byte-range.js';
import type { AppEnv } from '../../context.js';
import { charge } from '../../payment.js';
import { defineRoute } from '../define-route.js';
import type { RouteDeps } from '../shared.js';

/**
 * GET /v1/exports/{data_version}/{file}: one export file as it was written at publication, whole
 * or a byte range of it (206) to resume a download. Never computed here: a version without its
 * files (not written yet) answers 404 unknown_export.
 */
export function registerExportFile(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  defineRoute(
    app,
    deps,
    'getExportFile',
    {
      summary: 'One whole-table export file; Range: bytes=N- resumes a download (206)',
      request: { params: ExportFileParams, query: QUERIES.getExportFile },
      ok: {
        description:
          'The file, a .parquet or a .csv.gz (CSV with a header row, gzip); 206 Partial Content with Content-Range for a Range request. Its ETag is its sha256',
        content: {
          [EXPORT_FORMATS.parquet.mediaType]: { schema: ExportBytesSchema },
          [EXPORT_FORMATS.csv.mediaType]: { schema: ExportBytesSchema },
        },
      },
      errors: {
        404: 'No such file in this data version, or its files are not written yet (unknown_export)',
        410: 'That data version is no longer kept (data_version_gone; current_version names the current one)',
        416: 'The range starts past the end of the file (range_not_satisfiable; Content-Range: bytes */<size>)',
      },
    },
    async (c) => {
      const { data_version: version, file } = c.req.valid('param');
      const { snapshotDir, publicUrl } = c.get('services');
      const list = `${publicUrl}/v1/exports`;
      if (!existsSync(snapshotFile(snapshotDir, version)))
        throw new ServiceError(
          'data_version_gone',
          `Data version ${version} is not kept (the service keeps the last few published); ${list} lists the files of those kept.`,
          { data_version: version, current_version: c.get('snapshot').version, exports_url: list },
        );
      const manifest = readExportManifest(snapshotDir, version);
      const entry = manifest?.files.find((f) => f.file === file);
      if (!manifest || !entry)
        throw new ServiceError(
          'unknown_export',
          manifest
            ? `Data version ${version} has no file ${file}; its files are ${manifest.files.map((f) => f.file).join(', ')} (${list}).`
            : `The files of data version ${version} are not written yet (they are written when it is published); ${list} says when they are.`,
          { data_version: version, exports_url: list },
        );
      const etag = `"${entry.sha256}"`;
      const range = byteRange(c.req.header('range'), entry.bytes, c.req.header('if-range'), etag);
      if (range.kind === 'unsatisfiable')
        throw new ServiceError(
          'range_not_satisfiable',
          `The range asked for starts past the end of ${file} (${entry.bytes} bytes).`,
          { bytes: entry.bytes },
          { 'content-range': `bytes */${entry.bytes}` },
        );
      // Its own 4xx first; then the payment (an unpaid call's 402 opens no file).
      await charge(c);
      const [start, end] = range.kind === 'part' ? [range.start, range.end] : [0, entry.bytes - 1];
      const headers: Record<string, string> = {
        'content-type': EXPORT_FORMATS[entry.format].mediaType,
        'content-length': String(end - start + 1),
        'content-disposition': `attachment; filename="${version}-${file}"`,
        'accept-ranges': 'bytes',
        etag,
        // The file never changes under its URL; it is the plan's (or a payment's), not the public's.
        'cache-control': 'private, max-age=31536000, immutable',
        ...(range.kind === 'part' ? { 'content-range': `bytes ${start}-${end}/${entry.bytes}` } : {}),
      };
      const status = range.kind === 'part' ? 206 : 200;
      // A HEAD (how a ranged reader learns the size) opens no file.
      if (c.req.method === 'HEAD' || entry.bytes === 0) return c.body(null, status, headers) as never;
      const path = join(exportsFolder(snapshotDir, version), file);
      const body = Readable.toWeb(createReadStream(path, { start, end })) as ReadableStream<Uint8Array>;
      return c.body(body, status, headers) as never;
    },
  );
}
