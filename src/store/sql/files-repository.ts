// Stored files on the SQL stores: one `files` table holds every record on both drivers (one set of
// queries). The bytes go where the backend keeps them best:
// - PostgreSQL: the row's `content` bytea column, written with the record in one statement.
// - embedded: a file under <store.path>/files (`content` NULL). PGlite's WebAssembly memory never
//   shrinks once grown: one 20 MiB bytea insert took its process from 110 to 312 MB for good
//   (measured), where a file on disk costs the database nothing.
// Bytes travel to the database as base64 text (decode() in SQL): the embedded database's process
// takes byte parameters as JSON text (params.ts), so text is the one form both drivers accept.
import { mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { FileRepository } from '../port';
import type { FilePageQuery, FileViewer, StoredFileRecord } from '../types';
import type { SqlExecutor, SqlParam } from './database';
import { iso, type Timestamp } from './rows';

interface FileRow {
  id: string;
  org_id: string;
  user_id: string | null;
  filename: string;
  purpose: string;
  bytes: string | number | bigint;
  media_type: string;
  created_at: Timestamp;
}

const COLUMNS = 'id, org_id, user_id, filename, purpose, bytes, media_type, created_at';
/** Ids are ours (`file-` + hex); checked again before one names a path on disk. */
const FILE_ID = /^file-[0-9a-f]{24}$/;

function toFile(row: FileRow): StoredFileRecord {
  return {
    id: row.id,
    orgId: row.org_id,
    userId: row.user_id,
    filename: row.filename,
    purpose: row.purpose,
    bytes: Number(row.bytes),
    mediaType: row.media_type,
    createdAt: iso(row.created_at),
  };
}

/** The visibility condition on alias-less `files` rows; $1 org, $2 user (nullable), $3 admin. */
const VISIBLE = `org_id = $1 AND ($3::boolean OR user_id IS NOT DISTINCT FROM $2::text)`;

function viewerParams(viewer: FileViewer): [string, string | null, boolean] {
  return [viewer.orgId, viewer.userId, viewer.admin];
}

/** Bytes kept on disk (the embedded store): written whole to a temporary name, then renamed. */
class DiskContents {
  constructor(private readonly dir: string) {}

  private pathOf(id: string): string {
    if (!FILE_ID.test(id)) throw new Error(`not a stored file id: ${id.slice(0, 64)}`);
    return path.join(this.dir, id);
  }

  async write(id: string, content: Buffer): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const target = this.pathOf(id);
    const temporary = `${target}.partial`;
    const handle = await open(temporary, 'w', 0o600);
    try {
      await handle.writeFile(content);
      // On disk before the record that names it is committed.
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, target);
  }

  read(id: string): Promise<Buffer> {
    return readFile(this.pathOf(id));
  }

  async remove(id: string): Promise<void> {
    await unlink(this.pathOf(id)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  }
}

/**
 * `filesDir`: keep the bytes in files there (the embedded store) instead of the `content` column.
 * Records without their bytes cannot arise: bytes are written first and removed last.
 */
export function sqlFiles(db: SqlExecutor, filesDir: string | null): FileRepository {
  const disk = filesDir === null ? null : new DiskContents(filesDir);

  const readContent = async (id: string, column: Uint8Array | null): Promise<Buffer> => {
    if (column !== null) return Buffer.from(column.buffer, column.byteOffset, column.byteLength);
    if (!disk) throw new Error(`stored file ${id} has no content`);
    return disk.read(id);
  };

  const readWhere = async (where: string, params: SqlParam[]): Promise<{ file: StoredFileRecord; content: Buffer } | null> => {
    // The column is read only where the bytes live in it (NULL otherwise, a few bytes).
    const [row] = await db.query<FileRow & { content: Uint8Array | null }>(`SELECT ${COLUMNS}, content FROM files WHERE ${where}`, params);
    if (!row) return null;
    return { file: toFile(row), content: await readContent(row.id, row.content) };
  };

  return {
    async create(file, content) {
      if (content.length !== file.bytes) throw new Error(`stored file ${file.id}: ${content.length} bytes given for a record of ${file.bytes}`);
      if (disk) await disk.write(file.id, content);
      try {
        await db.query(`INSERT INTO files (${COLUMNS}, content) VALUES ($1, $2, $3, $4, $5, $6, $7, $8::timestamptz, decode($9, 'base64'))`, [
          file.id,
          file.orgId,
          file.userId,
          file.filename,
          file.purpose,
          file.bytes,
          file.mediaType,
          file.createdAt,
          disk ? null : content.toString('base64'),
        ]);
      } catch (err) {
        if (disk) await disk.remove(file.id).catch(() => undefined);
        throw err;
      }
    },
    async getVisible(viewer, id) {
      const [row] = await db.query<FileRow>(`SELECT ${COLUMNS} FROM files WHERE id = $4 AND ${VISIBLE}`, [...viewerParams(viewer), id]);
      return row ? toFile(row) : null;
    },
    async listVisible(viewer, query: FilePageQuery) {
      const params: SqlParam[] = [...viewerParams(viewer), query.purpose ?? null, query.limit];
      const direction = query.order === 'asc' ? 'ASC' : 'DESC';
      let after = '';
      if (query.after !== undefined) {
        params.push(query.after);
        // An `after` that is no visible file of the viewer's leaves the row comparison NULL: no rows.
        after = `AND (created_at, id) ${query.order === 'asc' ? '>' : '<'} (SELECT created_at, id FROM files WHERE id = $6 AND ${VISIBLE})`;
      }
      const rows = await db.query<FileRow>(
        `SELECT ${COLUMNS} FROM files
         WHERE ${VISIBLE} AND ($4::text IS NULL OR purpose = $4::text) ${after}
         ORDER BY created_at ${direction}, id ${direction}
         LIMIT $5`,
        params,
      );
      return rows.map(toFile);
    },
    readVisible(viewer, id) {
      return readWhere(`id = $4 AND ${VISIBLE}`, [...viewerParams(viewer), id]);
    },
    read(id) {
      return readWhere('id = $1', [id]);
    },
    async deleteVisible(viewer, id) {
      const [row] = await db.query<{ id: string }>(`DELETE FROM files WHERE id = $4 AND ${VISIBLE} RETURNING id`, [...viewerParams(viewer), id]);
      if (!row) return false;
      if (disk) await disk.remove(row.id);
      return true;
    },
  };
}
