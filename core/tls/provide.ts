import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { PUBLIC, Type, httpErrors, type HttpScope, type TlsCertificates } from '../../sdk/index.ts';
import type { ConfigData } from '../config/config-data.ts';
import type { AcmeCertificates } from './acme.ts';
import { FileCertificates } from './certificates.ts';

/**
 * The core's `tlsCertificatesRef` provider for this config: ACME with `tls.auto`, else the
 * files. For ACME, `routes` answers the HTTP-01 challenges and `acme` is started once listening.
 * acme-client (about 15 MB of modules) is imported only when ACME is on.
 */
export async function certificateService(config: ConfigData, log: Logger): Promise<{ certs: TlsCertificates; acme?: AcmeCertificates }> {
  if (!config.tls.enable || !config.tls.auto) return { certs: new FileCertificates(config.tls) };
  const { AcmeCertificates } = await import('./acme.ts');
  const acme = new AcmeCertificates({
    names: config.host.name, email: config.tls.email, directoryUrl: config.tls.acme_directory,
    dir: join(resolve(config.db.dir), 'cert'), log: log.child({ component: 'ACME' }),
  });
  return { certs: acme, acme };
}

/** `GET /.well-known/acme-challenge/<token>`: public (the CA calls it), plain text. */
export function acmeChallengeRoutes(acme: AcmeCertificates) {
  return async (http: HttpScope) => {
    http.get('/.well-known/acme-challenge/:token', {
      config: PUBLIC, schema: { hide: true, params: Type.Object({ token: Type.String() }) },
    }, async (req, reply) => {
      const answer = acme.keyAuthorization(req.params.token);
      if (answer === undefined) throw httpErrors.notFound('Not Found', ['unknown challenge'], 'ACME_CHALLENGE_UNKNOWN');
      return reply.type('text/plain; charset=utf-8').send(answer);
    });
  };
}
