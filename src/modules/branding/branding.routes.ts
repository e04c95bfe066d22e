import { Router } from 'express';
import type { AppDeps } from '../../core/context.ts';
import { isId } from '../../core/ids.ts';
import { Workspace } from '../workspaces/workspace.entity.ts';
import { brandingOf } from './branding.service.ts';
import { BRANDING_STYLESHEET_PATH, brandingStylesheet } from './hosted.ts';

/** The workspace's stylesheet for the hosted pages (public: branding is what every visitor sees). */
export function brandingRoutes(deps: AppDeps): Router {
  const routes = Router();
  routes.get(BRANDING_STYLESHEET_PATH, async (req, res, next) => {
    try {
      const { workspaceId } = req.params;
      const em = deps.orm.em.fork();
      const workspace = isId('wsp', workspaceId) ? await em.findOne(Workspace, { id: workspaceId }) : null;
      if (!workspace) {
        res.status(404).type('text/css').set('Cache-Control', 'no-store').send('/* no such workspace */\n');
        return;
      }
      const css = brandingStylesheet(await brandingOf(em, workspace));
      res.type('text/css').set('Cache-Control', 'public, max-age=300').send(css);
    } catch (error) {
      next(error);
    }
  });
  return routes;
}
